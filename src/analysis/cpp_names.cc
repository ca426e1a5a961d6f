#include "analysis/cpp_names.h"

#include <array>
#include <utility>
#include <vector>

namespace strata::analysis {
namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

// The qualified name that ends where a '<' opens its arguments.
std::string_view template_name(std::string_view text) {
  size_t start = text.size();
  while (start > 0 && is_name_char(text[start - 1])) --start;
  return text.substr(start);
}

std::string tmpl(std::string_view name, std::string_view arg) {
  return std::string(name) + "<" + std::string(arg) + ">";
}

// The standard's character-type templates and their everyday names.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kCharTemplates = {{
    {"std::basic_string", "string"},
    {"std::basic_string_view", "string_view"},
    {"std::basic_ostream", "ostream"},
    {"std::basic_istream", "istream"},
    {"std::basic_iostream", "iostream"},
    {"std::basic_ios", "ios"},
    {"std::basic_streambuf", "streambuf"},
    {"std::basic_ofstream", "ofstream"},
    {"std::basic_ifstream", "ifstream"},
    {"std::basic_stringstream", "stringstream"},
    {"std::basic_ostringstream", "ostringstream"},
    {"std::basic_istringstream", "istringstream"},
}};

// std::string is basic_string<char>, std::wstring basic_string<wchar_t>, ...
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kCharPrefixes = {
    {{"char", ""}, {"wchar_t", "w"}, {"char8_t", "u8"}, {"char16_t", "u16"}, {"char32_t", "u32"}}};

// The everyday name of a character template whose arguments are all
// defaults (std::string), or "" when it has none.
std::string char_template_name(std::string_view name, const std::vector<std::string>& args) {
  for (const auto& [base, plain] : kCharTemplates) {
    if (name != base || args.empty()) continue;
    const std::string& c = args[0];
    const bool allocates = plain == "string" || plain.ends_with("stringstream");
    const size_t full = allocates ? 3 : 2;
    if (args.size() > full) return "";
    if (args.size() > 1 && args[1] != tmpl("std::char_traits", c)) return "";
    if (args.size() > 2 && args[2] != tmpl("std::allocator", c)) return "";
    for (const auto& [type, prefix] : kCharPrefixes) {
      if (c == type) return "std::" + std::string(prefix) + std::string(plain);
    }
    return "";
  }
  return "";
}

// The default of each argument after the ones a container cannot do
// without (an empty string: no default), for the standard containers.
std::vector<std::string> container_defaults(std::string_view name,
                                            const std::vector<std::string>& args) {
  if (args.empty()) return {};
  const std::string& t = args[0];
  if (name == "std::vector" || name == "std::deque" || name == "std::list" ||
      name == "std::forward_list") {
    return {"", tmpl("std::allocator", t)};
  }
  if (name == "std::unique_ptr") return {"", tmpl("std::default_delete", t)};
  if (name == "std::queue" || name == "std::stack") return {"", tmpl("std::deque", t)};
  if (name == "std::set" || name == "std::multiset") {
    return {"", tmpl("std::less", t), tmpl("std::allocator", t)};
  }
  if (name == "std::unordered_set" || name == "std::unordered_multiset") {
    return {"", tmpl("std::hash", t), tmpl("std::equal_to", t), tmpl("std::allocator", t)};
  }
  if (args.size() < 2) return {};
  const std::string pair_alloc =
      tmpl("std::allocator", "std::pair<" + t + " const, " + args[1] + ">");
  if (name == "std::map" || name == "std::multimap") {
    return {"", "", tmpl("std::less", t), pair_alloc};
  }
  if (name == "std::unordered_map" || name == "std::unordered_multimap") {
    return {"", "", tmpl("std::hash", t), tmpl("std::equal_to", t), pair_alloc};
  }
  return {};
}

// name<args> with trailing default arguments dropped (C++ can only omit
// trailing ones), or the everyday name of a character template.
std::string reduced_template(std::string_view name, std::vector<std::string> args) {
  if (std::string plain = char_template_name(name, args); !plain.empty()) return plain;
  const std::vector<std::string> defaults = container_defaults(name, args);
  if (args.size() <= defaults.size()) {
    while (!args.empty() && !defaults[args.size() - 1].empty() &&
           args.back() == defaults[args.size() - 1]) {
      args.pop_back();
    }
  }
  std::string out(name);
  out += '<';
  for (size_t a = 0; a < args.size(); ++a) {
    if (a > 0) out += ", ";
    out += args[a];
  }
  return out + '>';
}

bool ends_with_operator(std::string_view text) {
  return text.ends_with("operator") || text.ends_with("operator<") || text.ends_with("operator-") ||
         text.ends_with("operator<=") || text.ends_with("operator>");
}

}  // namespace

std::string short_cpp_name(std::string_view name) {
  if (name.size() > kMaxShortenedName) return std::string(name);
  std::string s(name);
  replace_all(s, "[abi:cxx11]", "");
  if (s.find("std::") == std::string::npos) return s;  // <module>, <genexpr>: not C++ templates
  replace_all(s, "std::__cxx11::", "std::");
  replace_all(s, "std::__1::", "std::");

  // One open template argument list: the text before its '<' lives in the
  // enclosing level's current argument.
  struct Level {
    std::vector<std::string> args;  // finished arguments
    std::string current;            // the argument being read
  };
  std::vector<Level> levels(1);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    Level& top = levels.back();
    // operator<, operator<<, operator<=, operator->, operator> ...: not brackets.
    if ((c == '<' || c == '>') && ends_with_operator(top.current)) {
      top.current += c;
      continue;
    }
    if (c == '<') {
      // A list after no name (an operator template's "operator<< <...>")
      // is kept as it is, with its arguments shortened.
      if (levels.size() > kMaxTemplateDepth) return std::string(name);
      levels.emplace_back();
      continue;
    }
    if (c == ',' && levels.size() > 1) {
      top.args.push_back(trim(top.current));  // "a, b": the space is the separator's
      top.current.clear();
      continue;
    }
    if (c == '>') {
      if (levels.size() == 1) return std::string(name);
      Level done = std::move(levels.back());
      levels.pop_back();
      done.args.push_back(trim(done.current));
      std::string& outer = levels.back().current;
      const std::string tname(template_name(outer));
      outer.resize(outer.size() - tname.size());
      outer += reduced_template(tname, std::move(done.args));
      continue;
    }
    top.current += c;
  }
  if (levels.size() != 1) return std::string(name);
  return levels.front().current;
}

Profile with_short_names(const Profile& profile) {
  return with_changed_frames(profile, [](Frame& f) { f.function = short_cpp_name(f.function); });
}

}  // namespace strata::analysis
