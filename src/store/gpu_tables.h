// The CUDA and NVTX tables of a trace (strata's or an Nsight Systems export:
// both use nsys's export schema) loaded into memory as columns, for the
// nsys-compatible summaries in analysis/gpu_summary.h.
//
// Only the columns a report needs are read, with one prepared statement per
// table, and names stay integer StringIds ids: the analyses group by id and
// resolve only the ids that reach a report row (`strings`). Tables that nsys
// did not create (it creates them lazily) load as absent, not as errors;
// optional columns that an older export lacks load as NULL.
//
// Threading: load_gpu_tables reads through the caller's connection; use it
// from the thread that owns that connection. The result is a plain value.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "store/trace_db.h"

struct sqlite3;

namespace strata::store {

// Which of a kernel's names to load: cuda_gpu_kern_sum's default (demangled),
// `:base` (shortName) or `:mangled` (mangledName; demangledName where a row
// or an older export has none, as nsys does).
enum class KernelNameKind { kDemangled, kBase, kMangled };

// An id of StringIds that is absent or NULL in the row.
inline constexpr int64_t kNoString = -1;

// CUPTI_ACTIVITY_KIND_RUNTIME: CUDA runtime and driver calls.
struct RuntimeColumns {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  std::vector<int64_t> global_tid;      // 0 where NULL
  std::vector<int64_t> correlation_id;  // 0 where NULL
  std::vector<int64_t> name_id;
  // Empty unless loaded with GpuLoadOptions::timeline: eventClass
  // (ENUM_NSYS_EVENT_CLASS: 0 runtime, 1 driver; 0 where NULL).
  std::vector<int64_t> event_class;
  size_t size() const { return start.size(); }
};

// The launch configuration of kernels, for a timeline's slice arguments; 0
// where NULL.
struct KernelLaunchColumns {
  std::vector<int64_t> stream_id;
  std::vector<std::array<int64_t, 3>> grid;
  std::vector<std::array<int64_t, 3>> block;
  std::vector<int64_t> registers_per_thread;
  std::vector<int64_t> static_shared_memory;
  std::vector<int64_t> dynamic_shared_memory;
};

// CUPTI_ACTIVITY_KIND_KERNEL.
struct KernelColumns {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  std::vector<int64_t> name_id;  // the name picked by KernelNameKind
  // Empty unless loaded with GpuLoadOptions::kernel_links:
  std::vector<int64_t> device_id;
  std::vector<int64_t> correlation_id;  // 0 where NULL
  std::vector<int64_t> global_pid;      // 0 where NULL
  KernelLaunchColumns launch;           // empty unless loaded with GpuLoadOptions::timeline
  size_t size() const { return start.size(); }
};

// CUPTI_ACTIVITY_KIND_MEMCPY and CUPTI_ACTIVITY_KIND_MEMSET (copy_kind is
// empty for memsets).
struct MemOpColumns {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  std::vector<int64_t> bytes;
  std::vector<int64_t> copy_kind;  // ENUM_CUDA_MEMCPY_OPER id
  // Empty unless loaded with GpuLoadOptions::timeline; 0 where NULL.
  std::vector<int64_t> global_pid;
  std::vector<int64_t> device_id;
  std::vector<int64_t> stream_id;
  std::vector<int64_t> correlation_id;
  // Copies loaded with GpuLoadOptions::timeline: srcKind and dstKind
  // (ENUM_CUDA_MEM_KIND: 0 pageable, 1 pinned, 2 device, ...; -1 where NULL).
  std::vector<int64_t> src_kind;
  std::vector<int64_t> dst_kind;
  size_t size() const { return start.size(); }
};

// ENUM_CUDA_MEM_KIND's pageable host memory: a copy from or to it is staged
// through a pinned buffer and is synchronous for the host.
inline constexpr int64_t kMemKindPageable = 0;

// NVTX_EVENTS rows of the range and domain-creation event types.
struct NvtxColumns {
  std::vector<int64_t> start;
  std::vector<int64_t> end;  // kNoEnd where NULL (a range never closed)
  std::vector<int32_t> event_type;
  std::vector<int64_t> global_tid;  // 0 where NULL
  std::vector<int64_t> domain_id;   // 0 where NULL
  std::vector<int64_t> text_id;     // kNoString where NULL
  std::vector<int32_t> text_index;  // into `texts`, -1 where the row has no text
  std::vector<std::string> texts;   // NVTX_EVENTS.text of the rows that have one
  int64_t max_timestamp = 0;        // max of all starts and ends in NVTX_EVENTS, for open ranges
  // The same maximum with NULL ends left out rather than read as 0 (the
  // Chrome export's rule); INT64_MIN for an empty table.
  int64_t last_timestamp = INT64_MIN;
  static constexpr int64_t kNoEnd = INT64_MIN;
  size_t size() const { return start.size(); }
};

// nsys's NVTX event types (ENUM_NSYS_EVENT_TYPE), as its nvtx_sum script uses them.
inline constexpr int32_t kNvtxPushPopRange = 59;
inline constexpr int32_t kNvtxStartEndRange = 60;
inline constexpr int32_t kNvtxtPushPopRange = 70;  // NVTX tools extension (nvtxt) variants
inline constexpr int32_t kNvtxtStartEndRange = 71;
inline constexpr int32_t kNvtxDomainCreate = 75;

enum GpuTable : unsigned {
  kRuntimeTable = 1u << 0,
  kKernelTable = 1u << 1,
  kMemcpyTable = 1u << 2,
  kMemsetTable = 1u << 3,
  kNvtxTable = 1u << 4,
  kAllGpuTables = 0x1f,
};

struct GpuLoadOptions {
  unsigned tables = kAllGpuTables;  // GpuTable bits
  KernelNameKind kernel_names = KernelNameKind::kDemangled;
  // Kernels' deviceId, correlationId and globalPid, which only the launch
  // reports (cuda_kern_exec_sum, the op table) use; without them the kernel
  // load reads three columns instead of six.
  bool kernel_links = true;
  // Everything a timeline draws (the Chrome export): runtime eventClass,
  // kernel streams and launch configuration, the streams and links of
  // copies and memsets, thread and process names. Implies kernel_links;
  // copies' bytes and copyKind become optional (NULL reads as 0).
  bool timeline = false;
};

struct GpuTables {
  std::string source;  // the file, printable, for report notes

  // Which tables the file holds; an absent table loads as empty columns.
  bool has_string_ids = false;
  bool has_runtime = false;
  bool has_kernels = false;
  bool has_memcpy = false;
  bool has_memcpy_enum = false;  // ENUM_CUDA_MEMCPY_OPER
  bool has_memset = false;
  bool has_nvtx = false;
  bool has_thread_names = false;  // ThreadNames
  bool has_processes = false;     // PROCESSES
  bool has_gpu_info = false;      // TARGET_INFO_GPU

  RuntimeColumns runtime;
  KernelColumns kernels;
  MemOpColumns memcpy;
  MemOpColumns memset;
  NvtxColumns nvtx;
  KernelNameKind kernel_names = KernelNameKind::kDemangled;

  // Loaded with GpuLoadOptions::timeline: ThreadNames' nameId per globalTid
  // (the highest priority, then the last row, of a renamed thread) and
  // PROCESSES' name per globalPid ("" where NULL).
  std::unordered_map<int64_t, int64_t> thread_name_ids;
  std::unordered_map<int64_t, std::string> process_names;
  // Loaded with GpuLoadOptions::timeline: TARGET_INFO_GPU's smCount per
  // device id (absent where the table or the value is).
  std::unordered_map<int64_t, int64_t> sm_counts;

  // ENUM_CUDA_MEMCPY_OPER id -> label ("Host-to-Device", ...).
  std::unordered_map<int64_t, std::string> memcpy_labels;

  // StringIds values of the ids a summary may print: the name ids of the
  // loaded rows. An id absent from StringIds is absent here.
  std::unordered_map<int64_t, std::string> strings;

  // The StringIds value of `id`, or nullptr.
  const std::string* string(int64_t id) const;
};

// Loads the tables named in `options` through `db` (a TraceReader's handle,
// or any connection to a file with nsys's schema). `name` names the file in
// errors. A missing table is not an error; a table without a column a report
// cannot do without (start, end, nameId, ...) is, and so is a read failure
// (a damaged file), each as one line naming the file and the table.
// Reads through memory-mapped I/O for the duration of the call (the
// connection's mmap_size is restored before returning).
Result<GpuTables> load_gpu_tables(sqlite3* db, const std::string& name,
                                  const GpuLoadOptions& options = {});

// Each kernel's mangled name by its demangled name, from the same kernel
// rows loaded twice: with the default names (`by_demangled`) and with
// KernelNameKind::kMangled (`by_mangled`). What names one template
// instantiation exactly, where the demangled name's base name ("gemm")
// would match every instantiation. Rows are paired by position and must
// agree on their start; a demangled name that two mangled names share is
// left out.
std::unordered_map<std::string, std::string> mangled_kernel_names(const GpuTables& by_demangled,
                                                                  const GpuTables& by_mangled);

// Whether the trace holds any CUDA trace rows (runtime calls or kernels):
// what decides that `strata report` prints the GPU summaries by default.
// A missing table (a CPU-only strata file, an export without CUDA) is "no";
// a table that cannot be read is an error naming the file, never "no data".
Result<bool> cuda_data_present(const TraceReader& reader);

}  // namespace strata::store
