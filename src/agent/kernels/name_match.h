// Which kernels `strata kernels` profiles: STRATA_KERNEL_NAME against a
// kernel's name, the way ncu's --kernel-name with its default
// --kernel-name-base function does it (docs/kernels-interface.md):
//   unset / empty    every kernel
//   "regex:RE"       POSIX extended RE searched (not fully matched) in the base name
//   anything else    equal to the base name or to the mangled name
// The base name is the demangled name without return type, parameter list,
// template arguments and enclosing namespaces/classes:
//   "void ns::gemm<float, 128>(float const*, int)"  -> "gemm"
//   "(anonymous namespace)::scale(float*)"           -> "scale"
//
// Allocation: KernelNameFilter::init compiles the regex once (regcomp
// allocates); matches() demangles with abi::__cxa_demangle (malloc), so the
// caller caches its answer per name (kernel_table.h). No exceptions: POSIX
// regex instead of <regex>, which throws on a bad pattern.
// Threading: after init, matches() is const and may run on any thread.
#pragma once

#include <regex.h>

#include <cstddef>
#include <string_view>

namespace strata::agent::kernels {

// The base name inside a demangled name (a view into it). A name that is not
// a C++ declaration ("my_kernel" of an extern "C" kernel) is its own base.
std::string_view base_name(std::string_view demangled);

class KernelNameFilter {
 public:
  KernelNameFilter() = default;
  ~KernelNameFilter();
  KernelNameFilter(const KernelNameFilter&) = delete;
  KernelNameFilter& operator=(const KernelNameFilter&) = delete;

  // `spec` is STRATA_KERNEL_NAME (null or empty: every kernel). Returns false
  // with `error` filled (regerror's text) when the regex does not compile;
  // the filter then matches nothing.
  bool init(const char* spec, char* error, size_t error_size);
  // Demangles `mangled` (abi::__cxa_demangle; a name that is not a mangled
  // C++ name is used as it is) and decides.
  bool matches(const char* mangled) const;
  // The same decision from a name already demangled.
  bool matches(std::string_view mangled, std::string_view demangled) const;
  bool matches_everything() const { return kind_ == Kind::kAll; }

 private:
  enum class Kind { kAll, kExact, kRegex, kNothing };
  Kind kind_ = Kind::kAll;
  static constexpr size_t kMaxSpec = 1024;
  char exact_[kMaxSpec] = {};
  regex_t regex_{};
  bool regex_compiled_ = false;
};

}  // namespace strata::agent::kernels
