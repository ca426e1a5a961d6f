#include "common/strings.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata {

Result<std::vector<std::string>> split_command_line(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      size_t close = line.find('\'', i + 1);
      if (close == std::string_view::npos)
        return make_error("unterminated ' in command: " + std::string(line));
      word.append(line.substr(i + 1, close - i - 1));
      i = close;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() && (line[j + 1] == '"' || line[j + 1] == '\\')) {
          ++j;
        } else if (line[j] == '$' || line[j] == '`') {
          return make_error("command needs a shell ('" + std::string(1, line[j]) +
                            "' inside \"...\"); write it as sh -c '...'");
        }
        word.push_back(line[j]);
      }
      if (j >= line.size()) return make_error("unterminated \" in command: " + std::string(line));
      i = j;
    } else if (c == '\\') {
      if (i + 1 >= line.size()) return make_error("command ends with a lone backslash");
      word.push_back(line[++i]);
    } else if (std::string_view("|&;<>()$`*?[]{}~#").find(c) != std::string_view::npos &&
               !(c == '#' && !word.empty())) {
      return make_error(std::string("command needs a shell ('") + c +
                        "'); write it as sh -c '...'");
    } else {
      word.push_back(c);
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return make_error("empty command");
  return words;
}

std::string shell_quote(std::string_view word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "_-./=:,+@%") == std::string_view::npos) {
    return std::string(word);
  }
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

std::optional<double> parse_double(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::optional<long long> parse_int(std::string_view text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::string plural(long long n, std::string_view one, std::string_view many) {
  std::string out = std::to_string(n);
  out += ' ';
  out += n == 1 ? one : many;
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string escape_json_del(std::string json) {
  if (json.find('\x7f') == std::string::npos) return json;
  std::string out;
  out.reserve(json.size() + 16);
  for (char c : json) {
    if (c == '\x7f') {
      out += "\\u007f";
    } else {
      out += c;
    }
  }
  return out;
}

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return std::string(std::strerror(err)) + (name ? std::string(" (") + name + ")" : "");
}

}  // namespace strata
