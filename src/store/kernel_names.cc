#include "store/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace strata::store {
namespace {

// Index of the bracket opening the one that closes at `close`, or npos.
size_t matching_open(std::string_view text, size_t close, char open_char, char close_char) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (text[i] == close_char) ++depth;
    if (text[i] == open_char && --depth == 0) return i;
  }
  return std::string_view::npos;
}

}  // namespace

std::string base_name(std::string_view name) {
  std::string_view s = name;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  // Trailing qualifiers of a member function ("... const").
  if (s.size() > 6 && s.substr(s.size() - 6) == " const") s.remove_suffix(6);
  if (!s.empty() && s.back() == ')') {
    size_t open = matching_open(s, s.size() - 1, '(', ')');
    if (open != std::string_view::npos && open > 0) s = s.substr(0, open);
  }
  if (!s.empty() && s.back() == '>') {
    size_t open = matching_open(s, s.size() - 1, '<', '>');
    // "operator<" / "operator>>" keep their brackets: only strip a real list.
    if (open != std::string_view::npos && open > 0 &&
        s.substr(0, open).find("operator") == std::string_view::npos) {
      s = s.substr(0, open);
    }
  }
  // The last scope or return-type separator outside brackets.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<' || c == '(' || c == '[') ++depth;
    if ((c == '>' || c == ')' || c == ']') && depth > 0) --depth;
    if (depth != 0) continue;
    if (c == ' ' && s.substr(i + 1).rfind("operator", 0) != 0) start = i + 1;
    if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') start = i + 2;
  }
  std::string_view base = s.substr(start);
  return base.empty() ? std::string(name) : std::string(base);
}

KernelNames kernel_names(std::string_view mangled) {
  KernelNames names;
  names.mangled = std::string(mangled);
  if (mangled.size() > 2 && mangled.substr(0, 2) == "_Z") {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(names.mangled.c_str(), nullptr, nullptr, &status), &std::free);
    if (status == 0 && out) {
      names.demangled = out.get();
      names.base = base_name(names.demangled);
      return names;
    }
  }
  // C-linkage kernels (cuBLAS's sm80_xmma_gemm_...) and names that do not
  // demangle: nsys stores the same text under all three names.
  names.demangled = names.mangled;
  names.base = names.mangled;
  return names;
}

}  // namespace strata::store
