// The three names nsys keeps per kernel (CUPTI_ACTIVITY_KIND_KERNEL's
// demangledName, shortName, mangledName), from the mangled name CUPTI gives.
// In store, not the CUDA-only ingest library: the kernel reports name
// strata_kernel_metrics' mangled names with it in any build.
// Threading: pure functions. Allocation: the returned strings.
#pragma once

#include <string>
#include <string_view>

namespace strata::store {

struct KernelNames {
  std::string
      demangled;        // "void gemm<128>(float const*, int)"; the raw name when it is not mangled
  std::string base;     // "gemm": no return type, scope, template arguments or parameters
  std::string mangled;  // as CUPTI gave it
};

KernelNames kernel_names(std::string_view mangled);

// The base name of a demangled C++ function name, as nsys's shortName.
std::string base_name(std::string_view demangled);

}  // namespace strata::store
