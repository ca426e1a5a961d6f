#include "common/output_name.h"

#include <cstdlib>
#include <vector>

#include "common/strings.h"

namespace strata {

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

bool has_output_specifiers(std::string_view pattern) {
  return pattern.find('%') != std::string_view::npos;
}

namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

Result<std::string> expand_output_name(std::string_view pattern, const OutputNameContext& context) {
  std::string out;
  std::vector<std::string> problems;
  bool unknown_specifier = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 1 == pattern.size()) {
      problems.push_back("a lone % at the end");
      unknown_specifier = true;
      break;
    }
    char spec = pattern[++i];
    switch (spec) {
      case '%':
        out += '%';
        break;
      case 'p':
        out += std::to_string(context.pid);
        break;
      case 'h':
        if (context.host.empty()) problems.push_back("%h: this machine has no host name");
        out += context.host;
        break;
      case 'q': {
        size_t close = pattern.find('}', i + 1);
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string_view::npos) {
          problems.push_back("%q needs a variable name in braces, as in %q{RANK}");
          unknown_specifier = true;
          break;
        }
        std::string name(pattern.substr(i + 2, close - i - 2));
        i = close;
        if (name.empty()) {
          problems.push_back("%q{} names no variable");
          break;
        }
        auto value = context.env ? context.env(name) : std::nullopt;
        if (!value) {
          problems.push_back("environment variable " + printable(name) + " is not set");
        } else if (value->empty()) {
          problems.push_back("environment variable " + printable(name) + " is empty");
        } else {
          out += *value;
        }
        break;
      }
      default:
        problems.push_back("unknown specifier %" + printable(std::string_view(&spec, 1)));
        unknown_specifier = true;
        break;
    }
  }
  if (problems.empty()) return out;
  std::string message = "output name '" + printable(pattern) + "': " + join(problems);
  if (unknown_specifier) message += " (known: %q{VAR}, %p, %h, %%)";
  return make_error(std::move(message));
}

}  // namespace strata
