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
// CUPTI times a recorded kernel by instrumenting it (its headers: "SW
// instrumentation and semaphore based"; hardware timestamps only on
// Blackwell): on the H200 every warp of a recorded kernel executed 8 more
// instructions (622,592 against 884,776 for 32,768 warps of a 4 MB
// read-modify-write kernel; docs/PERFORMANCE.md "Kernel records
// instrument"). So records are on only where they must be:
//   strata's replay (--cache-control all): for one extra relaunch of the
//     profiled kernel after its passes (flushed_replay.h), memory restored
//     after it; every other launch, the program's own included, and the
//     passes themselves run uninstrumented, as under ncu;
//   CUPTI's kernel replay (--cache-control none): from the agent's start
//     until the last launch to profile, because CUPTI decides whether to
//     record a kernel when it is launched (enabling records in the launch's
//     own API callback is too late for it). CUPTI's replay passes run
//     uninstrumented; the program's launches before the last profiled one
//     carry the instrumentation.
// Either way, records are process-wide: a launch another thread makes while
// they are on is recorded too (its record is dropped unread).
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
  enum class Records {
    kAroundRelaunch,  // off until record_begin (strata's replay)
    kFromStart,       // on from start() until stop() (CUPTI's kernel replay)
  };
  // Registers CUPTI's activity buffer callbacks (the tracer, which owns
  // them in trace mode, does not run in kernels mode). False: unavailable,
  // and the other calls do nothing.
  bool start(Records records);
  // The launch API call, with `correlation_id`, whose record is wanted.
  void expect(uint32_t correlation_id);
  // kAroundRelaunch: records on, for the relaunch strata makes between
  // these; its API call's correlation id must be given to expect().
  void record_begin();
  void record_end();
  bool recording() const { return recording_; }
  // After the launch: flushes CUPTI's records and returns the wanted one.
  // `debug`: one stderr line on what came back.
  ExecutedLaunch collect(bool debug);
  // After the last launch to profile: no more kernel records.
  void stop();

 private:
  bool started_ = false;
  bool enabled_ = false;  // CONCURRENT_KERNEL records are on
  bool recording_ = false;
};

}  // namespace strata::agent::kernels
