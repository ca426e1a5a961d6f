#include "agent/kernels/name_match.h"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>

namespace strata::agent::kernels {

namespace {

constexpr std::string_view kRegexPrefix = "regex:";
constexpr std::string_view kAnonymousNamespace = "(anonymous namespace)";
constexpr std::string_view kOperator = "operator";

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// After "operator" at `i`: the end of the operator's symbol ("()", "[]",
// "<<=", "->", ...), so that its brackets are not taken for a template or
// parameter list. A conversion operator or operator new has none.
size_t skip_operator_symbol(std::string_view s, size_t i) {
  if (i + 1 < s.size() && ((s[i] == '(' && s[i + 1] == ')') || (s[i] == '[' && s[i + 1] == ']'))) {
    return i + 2;
  }
  while (i < s.size() && std::strchr("+-*/%^&|~!=<>,", s[i]) != nullptr && s[i] != '\0') ++i;
  return i;
}

}  // namespace

std::string_view base_name(std::string_view s) {
  // One forward scan. At nesting depth 0 the parameter list is the first '('
  // that is neither "(anonymous namespace)" nor part of an operator's name;
  // the base name starts after the last "::" or space (the return type)
  // before it and ends before a trailing <...> group. Brackets nest on a
  // stack so that '<' and '>' inside parentheses (a template argument
  // expression such as "(3>>1)") are comparisons, not brackets.
  constexpr size_t kMaxNesting = 256;
  char open[kMaxNesting];
  size_t depth = 0;
  size_t name_start = 0;
  size_t end = s.size();
  size_t template_start = std::string_view::npos;
  bool ends_in_template = false;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const bool in_parens = depth > 0 && open[depth - 1] == '(';
    if (c == 'o' && s.substr(i, kOperator.size()) == kOperator &&
        (i == 0 || !is_identifier_char(s[i - 1])) &&
        (i + kOperator.size() >= s.size() || !is_identifier_char(s[i + kOperator.size()]))) {
      i = skip_operator_symbol(s, i + kOperator.size());
      if (depth == 0) ends_in_template = false;
      continue;
    }
    if (depth == 0 && c == '(' && s.substr(i, kAnonymousNamespace.size()) == kAnonymousNamespace) {
      i += kAnonymousNamespace.size();
      ends_in_template = false;
      continue;
    }
    if (depth == 0 && c == '(') {
      end = i;
      break;
    }
    switch (c) {
      case '<':
        if (in_parens) break;
        if (depth == 0) template_start = i;
        [[fallthrough]];
      case '(':
      case '[':
      case '{':
        if (depth == kMaxNesting) return s.substr(0, i);  // absurd nesting: give up cutting
        open[depth++] = c;
        break;
      case '>':
      case ')':
      case ']':
      case '}': {
        const char opener = c == '>' ? '<' : c == ')' ? '(' : c == ']' ? '[' : '{';
        if (depth > 0 && open[depth - 1] == opener) --depth;
        if (depth == 0) ends_in_template = c == '>';
        break;
      }
      case ':':
        if (depth == 0 && i + 1 < s.size() && s[i + 1] == ':') {
          name_start = i + 2;
          ends_in_template = false;
          i += 2;
          continue;
        }
        if (depth == 0) ends_in_template = false;
        break;
      case ' ':
        // At depth 0 a space ends the return type ("void foo",
        // "std::pair<int, int> foo").
        if (depth == 0) {
          name_start = i + 1;
          ends_in_template = false;
        }
        break;
      default:
        if (depth == 0) ends_in_template = false;
        break;
    }
    ++i;
  }
  size_t name_end = end;
  while (name_end > name_start && s[name_end - 1] == ' ') --name_end;
  if (ends_in_template && template_start != std::string_view::npos &&
      template_start >= name_start && template_start < name_end) {
    name_end = template_start;
  }
  if (name_end <= name_start) return s.substr(0, end);  // nothing sensible: keep what there is
  return s.substr(name_start, name_end - name_start);
}

KernelNameFilter::~KernelNameFilter() {
  if (regex_compiled_) regfree(&regex_);
}

bool KernelNameFilter::init(const char* spec, char* error, size_t error_size) {
  if (error_size > 0) error[0] = '\0';
  if (spec == nullptr || spec[0] == '\0') {
    kind_ = Kind::kAll;
    return true;
  }
  std::string_view text(spec);
  if (text.substr(0, kRegexPrefix.size()) == kRegexPrefix) {
    const char* pattern = spec + kRegexPrefix.size();
    // REG_NOSUB: only whether it matches. regexec searches, so "gemm"
    // finds "sgemm_kernel" as ncu's regex: does.
    int rc = regcomp(&regex_, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      if (error_size > 0) regerror(rc, &regex_, error, error_size);
      kind_ = Kind::kNothing;
      return false;
    }
    regex_compiled_ = true;
    kind_ = Kind::kRegex;
    return true;
  }
  if (text.size() >= kMaxSpec) {
    kind_ = Kind::kNothing;
    return false;
  }
  std::memcpy(exact_, spec, text.size() + 1);
  kind_ = Kind::kExact;
  return true;
}

bool KernelNameFilter::matches(std::string_view mangled, std::string_view demangled) const {
  switch (kind_) {
    case Kind::kAll:
      return true;
    case Kind::kNothing:
      return false;
    case Kind::kExact: {
      std::string_view wanted(exact_);
      return mangled == wanted || base_name(demangled) == wanted;
    }
    case Kind::kRegex: {
      std::string_view base = base_name(demangled);
      // regexec wants a NUL-terminated string. Base names are short (the
      // template arguments are gone); a longer one is cut.
      char buffer[4096];
      size_t n = base.size() < sizeof(buffer) - 1 ? base.size() : sizeof(buffer) - 1;
      std::memcpy(buffer, base.data(), n);
      buffer[n] = '\0';
      return regexec(&regex_, buffer, 0, nullptr, 0) == 0;
    }
  }
  return false;
}

bool KernelNameFilter::matches(const char* mangled) const {
  if (mangled == nullptr) return false;
  if (kind_ == Kind::kAll || kind_ == Kind::kNothing) return kind_ == Kind::kAll;
  int status = -1;
  char* demangled = nullptr;
  // Only "_Z..." names are C++; __cxa_demangle would also "demangle" a
  // plain "i" or "f" of an extern "C" kernel into a type name.
  if (mangled[0] == '_' && mangled[1] == 'Z') {
    demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  }
  bool result = matches(mangled, status == 0 && demangled != nullptr ? std::string_view(demangled)
                                                                     : std::string_view(mangled));
  std::free(demangled);
  return result;
}

}  // namespace strata::agent::kernels
