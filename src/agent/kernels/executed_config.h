// The shared-memory configuration (carveout) the driver ran a profiled
// launch with. Nsight Compute prints it as "Shared Memory Configuration
// Size", and the occupancy limit by shared memory depends on it; it is
// neither a launch parameter nor a function attribute (a library may set a
// carveout preference, and the driver picks the configuration), but CUPTI's
// kernel activity record carries it (CUpti_ActivityKernel10::
// sharedMemoryExecuted). So the kernel activity kind is enabled for the
// profiled launch alone and its record read back at the launch's exit.
#pragma once

#include <atomic>
#include <cstdint>

namespace strata::agent::kernels {

class ExecutedConfigProbe {
 public:
  // Registers CUPTI's activity buffer callbacks (the tracer, which owns
  // them in trace mode, does not run in kernels mode). False: unavailable,
  // and arm/collect do nothing.
  bool init();
  // Before the profiled launch, whose API call has `correlation_id`: kernel
  // records from now on.
  void arm(uint32_t correlation_id);
  // After it: stops kernel records, flushes them, and returns the bytes of
  // the launch's configuration (or of the only launch seen while armed), 0
  // when no record came.
  uint32_t collect();

 private:
  bool ready_ = false;
  bool armed_ = false;
};

}  // namespace strata::agent::kernels
