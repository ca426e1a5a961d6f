// The CUDA API calls the agent leaves out of its RUNTIME and DRIVER records
// (docs/agent.md: the getters left out, STRATA_AGENT_ALL_APIS). One list, shared with the CUPTI floor
// client (bench/cupti_floor.cc), so that "CUPTI's cost for the records strata
// keeps" is measured over exactly the same calls.
#pragma once

#include <cupti.h>

namespace strata::agent {

// Getters that frameworks call thousands of times per step (Kineto turns the
// same ones off): their records cost more than they tell.
inline constexpr CUpti_CallbackId kNoisyRuntimeApis[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
};
inline constexpr CUpti_CallbackId kNoisyDriverApis[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    // PyTorch asks it before every op (at::cuda::detail::hasPrimaryContext):
    // 537 calls in a 129-op run, CUDA 13.0 / torch 2.11.
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    // Once per launch in torch 2.11 (20,201 calls for 20,201 launches,
    // bench/agent_driver_check.py on the H200).
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
};

}  // namespace strata::agent
