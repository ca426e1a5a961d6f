// The agent's settings, read from the environment once at init.
//
//   STRATA_RUN_DIR             directory for spool-PID.bin (set by the CLI; required)
//   STRATA_AGENT_BUFFER_MB     size of one CUPTI activity buffer, MiB (default 8, 1..64)
//   STRATA_AGENT_BUFFER_COUNT  buffers in the pool: the memory cap (default 16, 2..1024)
//   STRATA_AGENT_FLUSH_MS      period of the drain thread's CUPTI flush (default 500, 10..500)
//   STRATA_AGENT_ALL_APIS      1: also record the noisy getter APIs (cudaGetDevice, ...)
//   STRATA_AGENT_RECORD        comma list of record groups (default: all of them
//                              but sync): kernel, runtime, driver, memory, sync, nvtx, meta
//   STRATA_AGENT_CLOCK         monotonic (default) or cupti: CUPTI's own clock, for
//                              measuring what the timestamp callback costs (its records
//                              do not line up with CPU samples)
//   STRATA_AGENT_DEBUG         1: one stderr line per CUPTI call of the kernel profiler
//
// Kernels mode (`strata kernels`; docs/kernels.md, docs/agent.md):
//   STRATA_AGENT_MODE          kernels: profile kernels with CUPTI's range profiler
//                              instead of tracing (default: trace)
//   STRATA_KERNEL_NAME         which kernels: unset = all; "regex:RE" = POSIX ERE search
//                              in the base name; otherwise the base name or mangled name
//   STRATA_KERNEL_SKIP         matching launches to skip first (default 0)
//   STRATA_KERNEL_COUNT        matching launches to profile after them (default: all)
//   STRATA_KERNEL_SECTIONS     comma list of sol, workload, launch, occupancy (default all)
//   STRATA_KERNEL_METRICS      comma list of raw metric names collected besides the
//                              sections' (ncu's --metrics; at most 16)
//   STRATA_KERNEL_CACHE_CONTROL  all (default): strata replays the kernel itself and
//                              flushes the caches before every pass, as ncu's
//                              --cache-control all; none: CUPTI's kernel replay, caches
//                              as the replay leaves them (kernels/flushed_replay.h)
//   STRATA_AGENT_KERNELS_FAIL  tests only: "privileges" simulates
//                              CUPTI_ERROR_INSUFFICIENT_PRIVILEGES at the first profiled launch
//   STRATA_AGENT_KERNELS_SMEM_PROBE  0: no CUPTI kernel records (kernels/executed_config.h):
//                              carveout predicted, registers from function attributes only
//
// Allocation: none; the struct holds fixed arrays. parse_config is pure
// apart from the lookup function it is given, so tests feed it a fake
// environment.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::agent {

// Groups of CUPTI activity kinds (tracer.cc maps each kind to one).
enum RecordGroup : uint32_t {
  kRecordKernel = 1u << 0,   // CONCURRENT_KERNEL
  kRecordRuntime = 1u << 1,  // RUNTIME
  kRecordDriver = 1u << 2,   // DRIVER
  kRecordMemory = 1u << 3,   // MEMCPY, MEMCPY2, MEMSET
  kRecordSync = 1u << 4,     // SYNCHRONIZATION
  kRecordNvtx = 1u << 5,     // MARKER, MARKER_DATA
  kRecordMeta = 1u << 6,     // DEVICE, CONTEXT, NAME
  kRecordAll = (1u << 7) - 1,
  // What is recorded unless STRATA_AGENT_RECORD says otherwise: every group
  // but SYNCHRONIZATION, which no report reads (the sync calls are in the
  // RUNTIME records already); its cost on a PyTorch loop is within the
  // H200's noise (docs/agent.md, "What each group costs").
  kRecordDefault = kRecordAll & ~kRecordSync,
};

// ncu's sections whose metrics kernels mode collects (kernels/metric_list.h).
enum KernelSection : uint32_t {
  kSectionSol = 1u << 0,        // GPU Speed Of Light Throughput
  kSectionWorkload = 1u << 1,   // GPU workload (active and elapsed cycles per unit)
  kSectionLaunch = 1u << 2,     // Launch Statistics: computed on the host, no counters
  kSectionOccupancy = 1u << 3,  // Achieved occupancy
  kSectionAll = (1u << 4) - 1,
};

enum class AgentMode : uint8_t {
  kTrace,    // CUPTI activity tracing (strata trace), the default
  kKernels,  // range-profiler metrics of chosen launches (strata kernels)
};

// STRATA_AGENT_KERNELS_FAIL: privileges -> CUPTI_ERROR_INSUFFICIENT_PRIVILEGES at
// the first profiled launch; unsupported-device -> cuptiProfilerDeviceSupported
// reads as a vGPU that cannot be profiled. Both then take the real paths.
enum class SimulatedFailure { kNone, kPrivileges, kUnsupportedDevice };

struct Config {
  static constexpr size_t kMaxPath = 4096;
  static constexpr size_t kMaxWarning = 256;
  static constexpr size_t kMaxKernelName = 1024;
  static constexpr uint64_t kAllLaunches = ~0ull;
  static constexpr size_t kMaxKernelMetrics = 16;        // STRATA_KERNEL_METRICS names
  static constexpr size_t kMaxKernelMetricsText = 1024;  // and their bytes

  bool has_run_dir = false;
  char run_dir[kMaxPath] = {};
  uint32_t buffer_mb = 8;
  uint32_t buffer_count = 16;
  uint32_t flush_ms = 500;
  bool all_apis = false;
  uint32_t record_groups = kRecordDefault;
  bool cupti_clock = false;  // STRATA_AGENT_CLOCK=cupti
  bool debug = false;        // STRATA_AGENT_DEBUG=1

  AgentMode mode = AgentMode::kTrace;
  // STRATA_KERNEL_NAME as given (empty: every kernel); kernels/name_match.h reads it.
  char kernel_name[kMaxKernelName] = {};
  uint64_t kernel_skip = 0;
  uint64_t kernel_count = kAllLaunches;
  uint32_t kernel_sections = kSectionAll;
  bool kernel_cache_flush = true;  // STRATA_KERNEL_CACHE_CONTROL: all (true) or none
  // STRATA_KERNEL_METRICS: extra raw metric names (ncu's --metrics), each
  // ended by a NUL; kernels/metric_list.h points into it.
  char kernel_metrics[kMaxKernelMetricsText] = {};
  uint32_t kernel_metric_count = 0;
  // STRATA_AGENT_KERNELS_FAIL (tests only): a fault the GPU machine does not have.
  SimulatedFailure simulated_failure = SimulatedFailure::kNone;
  bool smem_config_probe = true;  // STRATA_AGENT_KERNELS_SMEM_PROBE (0: off)
  // A value that was out of range or not a number: one line for stderr (the
  // default was kept). Empty when everything parsed.
  char warning[kMaxWarning] = {};
};

using EnvLookup = const char* (*)(const char* name);

Config parse_config(EnvLookup lookup);

// "RUN_DIR/spool-PID.bin" into `out`; false when it does not fit.
bool spool_path(const Config& config, int pid, char* out, size_t out_size);

}  // namespace strata::agent
