// The CUDA driver's injection entry point: with CUDA_INJECTION64_PATH naming
// libstrata_agent.so, cuInit dlopens it and calls InitializeInjection once
// per process (again in every exec'd child, which inherits the variable).
#include "agent/agent_init.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  // Idempotent, and 1 even when the process runs untraced: 0 would make the
  // driver report an injection failure to a program that should just run.
  strata::agent::ensure_started(strata::agent::Origin::kCudaInjection);
  return 1;
}
