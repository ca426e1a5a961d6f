// Chrome Trace Event JSON ("JSON Object Format") of a trace's GPU timeline,
// which Perfetto UI (ui.perfetto.dev) and chrome://tracing open:
// - one process per target process (PROCESSES), named after its executable;
// - per CPU thread a track of its CUDA runtime and driver calls, under the
//   thread's real tid and its ThreadNames name, a track of its NVTX
//   push/pop ranges and one of its PyTorch ops (nested as they ran); NVTX start/end ranges (which may end on another thread)
//   on one track per process;
// - per GPU stream a track of its kernels, memcpys and memsets, sorted after
//   the CPU threads (thread_sort_index; synthetic tids above any real one);
// - a flow arrow from each API call to the kernels and copies it launched,
//   matched by correlation id within the process, and one from each PyTorch
//   op to them, matched exactly through CUPTI's external correlation (the
//   op's external id -> the launch's correlation id), never by time;
// - complete ("X") events, ts and dur in microseconds written as exact
//   decimals of the nanosecond values ("12.345"), args with the launch
//   configuration and copy sizes and bandwidths;
// - slices that would overlap partially on a track go to an extra
//   "(overlap N)" track of the same kind (export/slice_lanes.h), so every
//   track nests properly.
// Names are written as JSON strings whatever they hold: control bytes
// escaped, invalid UTF-8 replaced by U+FFFD. Pure: no I/O; the CLI loads the
// tables (src/cli/export.cc) and writes the file.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata::exporter {

// Ids are nsys's serialized GlobalIds (docs/formats.md): pid in bits 24..47,
// the tid in the low 24 bits of a globalTid. Times are ns.

// A CUDA runtime or driver call: one row of CUPTI_ACTIVITY_KIND_RUNTIME.
struct TimelineApiCall {
  int64_t start = 0;
  int64_t end = 0;
  int64_t global_tid = 0;
  int64_t correlation_id = 0;  // 0: none
  bool driver = false;         // eventClass 1 (driver API), else runtime
  std::string name;
};

enum class GpuOpKind { kKernel, kMemcpy, kMemset };

// A kernel, memcpy or memset: one row of CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY
// or _MEMSET.
struct TimelineGpuOp {
  GpuOpKind kind = GpuOpKind::kKernel;
  int64_t start = 0;
  int64_t end = 0;
  int64_t global_pid = 0;
  int64_t device_id = 0;
  int64_t stream_id = 0;
  int64_t correlation_id = 0;  // 0: none
  std::string name;            // kernels: demangled name; copies: "[CUDA memcpy Host-to-Device]"
  // Kernels only.
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t registers_per_thread = 0;
  int64_t static_shared_memory = 0;   // bytes
  int64_t dynamic_shared_memory = 0;  // bytes
  // Memcpys and memsets only.
  int64_t bytes = 0;
  std::string copy_kind;  // memcpys: the ENUM_CUDA_MEMCPY_OPER label ("Host-to-Device")
};

// An NVTX range: one NVTX_EVENTS row of a push/pop or start/end event type.
struct TimelineNvtxRange {
  int64_t start = 0;
  int64_t end = 0;
  int64_t global_tid = 0;     // the thread that opened it
  bool push_pop = true;       // false: a start/end range
  bool unterminated = false;  // never closed: `end` is the table's last timestamp, as nsys does
  std::string name;
  std::string domain;  // empty for the default domain
};

// A PyTorch op (aten op, autograd node, record_function scope): one row of
// strata_torch_ops.
struct TimelineTorchOp {
  int64_t start = 0;
  int64_t end = 0;
  int64_t global_tid = 0;
  int64_t external_id = 0;  // what it pushed as CUPTI's external correlation id; 0: none
  int64_t seq = -1;         // autograd sequence number; -1: none
  bool unfinished = false;  // still open when its process's ops were written
  std::string name;
  std::string scope;   // "function", "backward_function", "user_scope", ...
  std::string shapes;  // input shapes when recorded
};

// CUPTI's external correlation: the API call `correlation_id` of process
// `global_pid` ran inside the op that pushed `external_id`.
struct TimelineExternalLink {
  int64_t global_pid = 0;
  int64_t correlation_id = 0;
  int64_t external_id = 0;
};

struct GpuTimeline {
  std::vector<TimelineApiCall> api_calls;
  std::vector<TimelineGpuOp> gpu_ops;
  std::vector<TimelineNvtxRange> nvtx_ranges;
  std::vector<TimelineTorchOp> torch_ops;
  std::vector<TimelineExternalLink> external_links;
  std::unordered_map<int64_t, std::string> process_names;  // globalPid -> PROCESSES.name
  std::unordered_map<int64_t, std::string> thread_names;   // globalTid -> ThreadNames' name

  bool empty() const {
    return api_calls.empty() && gpu_ops.empty() && nvtx_ranges.empty() && torch_ops.empty();
  }
};

struct ChromeTraceOptions {
  std::string source;    // otherData.source: the trace's file name
  std::string exporter;  // otherData.exporter, e.g. "strata 0.1.0"
};

// What the export did with odd input, also written into otherData.
struct ChromeTraceStats {
  size_t slices = 0;              // X events
  size_t flows = 0;               // launch arrows (each one "s" and one "f" event)
  size_t op_flows = 0;            // PyTorch op -> kernel/copy arrows
  size_t unmatched_gpu_ops = 0;   // kernels/copies without an API call of their correlation id
  size_t overlap_slices = 0;      // slices moved to an "(overlap N)" track
  size_t negative_durations = 0;  // end < start in the input, written with dur 0
};

struct ChromeTrace {
  std::string json;
  ChromeTraceStats stats;
};

// The whole document. Deterministic: equal inputs give equal bytes.
ChromeTrace chrome_trace(const GpuTimeline& timeline, const ChromeTraceOptions& options = {});

}  // namespace strata::exporter
