// Demangled C++ names as people write them (issue 20): the standard
// library's default template arguments and inline namespaces left out,
//   std::vector<std::__cxx11::basic_string<char, std::char_traits<char>,
//               std::allocator<char> >, std::allocator<...> >
// becomes std::vector<std::string>. Reports and exports show these;
// --full-names keeps what the demangler gave.
#pragma once

#include <string>
#include <string_view>

#include "analysis/cpu_profile.h"

namespace strata::analysis {

// The shortened name. Only std:: templates whose arguments are exactly
// their defaults are shortened; anything the parser does not follow
// (unbalanced brackets, nesting deeper than kMaxTemplateDepth, names longer
// than kMaxShortenedName) comes back unchanged, so a hostile name costs at
// most linear time and bounded stack.
std::string short_cpp_name(std::string_view name);

// The profile with every frame's function name shortened (frames that
// become equal stay separate ids; the analyses aggregate them by function).
Profile with_short_names(const Profile& profile);

inline constexpr size_t kMaxTemplateDepth = 64;
inline constexpr size_t kMaxShortenedName = 16384;

}  // namespace strata::analysis
