// The agent's one-time start-up, shared by its two entry points: the CUDA
// driver's InitializeInjection (cuda/injection.cc) and NVTX's
// InitializeInjectionNvtx2 (nvtx/nvtx_injection.cc), whichever comes first.
//
// Threading: ensure_started may be called from any threads at once; the
// set-up runs once (pthread_once) and every caller gets its outcome.
#pragma once

namespace strata::agent {

enum class Origin {
  kCudaInjection,  // InitializeInjection: normally from inside cuInit
  kNvtxInjection,  // InitializeInjectionNvtx2: the first NVTX call, maybe before cuInit
};

// True when this process is being traced (the CUDA entry) or its NVTX
// ranges should reach CUPTI (the NVTX entry: never in kernels mode).
bool ensure_started(Origin origin);

}  // namespace strata::agent
