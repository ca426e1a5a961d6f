// What the driver ran a profiled launch with, from CUPTI's kernel activity
// record (CUpti_ActivityKernel10): the shared-memory configuration
// (carveout) that Nsight Compute prints as "Shared Memory Configuration
// Size" and that the shared-memory block limit depends on, and the
// registers per thread and static shared memory that nsys and ncu print.
// None of these is reliably known otherwise: the carveout is the driver's
// choice (a library may set a preference), and a kernel launched through a
// statically linked runtime (nvcc's default, cuBLAS) has no CUfunction the
// agent can ask for its attributes.
//
// The kernel activity kind is enabled from the agent's start until the last
// launch to profile (records of other launches are dropped unread), because
// CUPTI decides whether to record a kernel when it is launched: enabling it
// in the profiled launch's own API callback is too late for that launch.
//
// CUPTI times a recorded kernel by instrumenting it (its headers: "SW
// instrumentation and semaphore based"; hardware timestamps only on
// Blackwell): on the H200 every warp of a recorded kernel executed 8 more
// instructions (622,592 against 884,776 for 32,768 warps of a 4 MB
// read-modify-write kernel; docs/PERFORMANCE.md "Kernel records
// instrument"). So strata's replay pauses the records while it runs its
// passes: the profiled kernel must run as the program compiled it, as under
// ncu. The program's own launch, decided before its callback, keeps its record.
// The pause is process-wide: a launch another thread makes meanwhile gets no
// record either; were it a launch to profile, its registers and carveout
// would come from the fallbacks docs/kernels.md names.
#pragma once

#include <cstdint>

namespace strata::agent::kernels {

// What the kernel record says of the launch.
struct ExecutedLaunch {
  bool found = false;
  uint32_t smem_config_bytes = 0;     // sharedMemoryExecuted
  uint32_t registers_per_thread = 0;  // registersPerThread
  uint32_t static_shared_bytes = 0;   // staticSharedMemory
};

class ExecutedConfigProbe {
 public:
  // Registers CUPTI's activity buffer callbacks (the tracer, which owns
  // them in trace mode, does not run in kernels mode) and enables kernel
  // records. False: unavailable, and the other calls do nothing.
  bool start();
  // Before the profiled launch whose API call has `correlation_id`.
  void expect(uint32_t correlation_id);
  // After it: flushes CUPTI's records and returns that launch's.
  // `debug`: one stderr line on what came back.
  ExecutedLaunch collect(bool debug);
  // Around strata's replay passes, inside the profiled launch's callback:
  // the replay's launches get no record and so no instrumentation.
  void pause();
  void resume();
  // After the last launch to profile: no more kernel records.
  void stop();

 private:
  bool started_ = false;
  bool paused_ = false;
};

}  // namespace strata::agent::kernels
