// CUPTI callback ids -> API function names, from a table generated at build
// time out of the toolkit's cupti_runtime_cbid.h / cupti_driver_cbid.h
// (gen_cbid_names.cmake), so no libcupti is needed to name a call. Names keep
// CUPTI's version suffixes, as nsys stores them: cudaLaunchKernelExC_v11060,
// cuGetProcAddress_v2.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata::import {

// "" for an id the build's headers do not name (a newer CUPTI).
std::string_view runtime_cbid_name(uint32_t cbid);
std::string_view driver_cbid_name(uint32_t cbid);

}  // namespace strata::import
