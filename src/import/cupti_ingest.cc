#include "import/cupti_ingest.h"

#include <cupti_activity.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>

#include "common/strings.h"
#include "format/payloads.h"
#include "format/spool_reader.h"
#include "import/cbid_names.h"
#include "import/chunk_visitor.h"
#include "import/cuda_rows.h"
#include "import/cupti_records.h"
#include "store/cpu_profile_rows.h"
#include "store/kernel_metric_rows.h"
#include "store/kernel_names.h"
#include "store/torch_op_rows.h"

namespace strata::import {
namespace {

// The oldest CUPTI whose layouts this build reads (the agent refuses older).
constexpr uint32_t kMinCuptiVersion = 130000;
// Kernel rows handed to TraceWriter::write_kernels at a time.
constexpr size_t kKernelFlush = 4096;

// ENUM_NSYS_EVENT_TYPE values nsys gives NVTX rows.
constexpr int64_t kNvtxMark = 34;
constexpr int64_t kNvtxPushPop = 59;
constexpr int64_t kNvtxStartEnd = 60;
constexpr int64_t kNvtxDomainCreate = 75;

// CUPTI's CUpti_ActivityMemoryKind -> nsys's ENUM_CUDA_MEM_KIND: nsys has no
// leading "unknown" (CUPTI 0) and puts it last (7).
int64_t nsys_mem_kind(uint32_t cupti_kind) {
  if (cupti_kind >= CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE &&
      cupti_kind <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC) {
    return static_cast<int64_t>(cupti_kind) - 1;
  }
  return 7;
}

// CUpti_ActivityMemcpyKind and ENUM_CUDA_MEMCPY_OPER agree on 0..10 (nsys
// adds the unified-memory kinds 11..13 that CUPTI reports elsewhere).
int64_t nsys_copy_kind(uint32_t cupti_kind) {
  return cupti_kind <= CUPTI_ACTIVITY_MEMCPY_KIND_PTOP ? cupti_kind : 0;
}

// CUpti_ActivitySynchronizationType and ENUM_CUPTI_SYNC_TYPE agree on 0..4.
int64_t nsys_sync_type(uint32_t cupti_type) {
  return cupti_type <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE ? cupti_type : 0;
}

std::string uuid_text(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char out[40];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

// nsys's TARGET_INFO_GPU columns from a DEVICE record.
GpuInfoRow gpu_info_row(const CUpti_ActivityDevice5& r, const std::string& name,
                        const std::string& uuid) {
  GpuInfoRow g;
  g.id = r.id;
  g.name = name;
  g.uuid = uuid;
  g.l2_cache_size = r.l2CacheSize;
  g.total_memory = static_cast<int64_t>(r.globalMemorySize);
  g.memory_bandwidth = static_cast<int64_t>(r.globalMemoryBandwidth) * 1000;  // KB/s -> B/s
  g.clock_rate_hz = static_cast<int64_t>(r.coreClockRate) * 1000;             // kHz -> Hz
  g.sm_count = r.numMultiprocessors;
  g.threads_per_warp = r.numThreadsPerWarp;
  g.async_engines = r.numMemcpyEngines;
  g.max_warps_per_sm = r.maxWarpsPerMultiprocessor;
  g.max_blocks_per_sm = r.maxBlocksPerMultiprocessor;
  g.max_threads_per_block = r.maxThreadsPerBlock;
  g.max_registers_per_block = r.maxRegistersPerBlock;
  g.max_shmem_per_block = r.maxSharedMemoryPerBlock;
  g.max_shmem_per_block_optin = r.maxSharedMemoryPerBlock;
  g.max_shmem_per_sm = r.maxSharedMemoryPerMultiprocessor;
  g.max_registers_per_sm = r.maxRegistersPerMultiprocessor;
  g.constant_memory = r.constantMemorySize;
  g.max_ipc = r.maxIPC;
  g.max_block_dim[0] = r.maxBlockDimX, g.max_block_dim[1] = r.maxBlockDimY;
  g.max_block_dim[2] = r.maxBlockDimZ;
  g.max_grid_dim[0] = r.maxGridDimX, g.max_grid_dim[1] = r.maxGridDimY;
  g.max_grid_dim[2] = r.maxGridDimZ;
  g.compute_major = r.computeCapabilityMajor;
  g.compute_minor = r.computeCapabilityMinor;
  return g;
}

struct KernelNameIds {
  int64_t demangled = 0, base = 0, mangled = 0;
};

// The start of an NVTX range or a mark, until its end arrives.
struct OpenMarker {
  int64_t start = 0;
  int64_t global_tid = 0;
  uint32_t object_kind = 0;
  uint64_t name_id = 0;
  uint64_t domain_id = 0;
};

struct MarkerData {
  uint32_t color = 0;
  uint32_t category = 0;
  bool has_color = false;
};

// Ingest state shared by all spools of a run: the writer, caches of interned
// names, and what must be written once per trace.
class Ingester {
 public:
  Ingester(store::TraceWriter& writer, CudaRowWriter rows)
      : writer_(writer), rows_(std::move(rows)) {}

  Status ingest(const std::string& path);
  Status finish();
  IngestStats& stats() { return stats_; }

 private:
  // Per spool.
  struct Spool {
    uint32_t pid = 0;
    int64_t global_pid = 0;
    std::unordered_map<uint64_t, std::string> strings;
    std::unordered_map<uint64_t, KernelNameIds> kernel_names;  // by spool string id
    std::map<uint32_t, std::string> thread_names;
    std::map<uint32_t, uint64_t> drop_counters;
    std::string exe;
    std::unordered_map<uint32_t, uint32_t> context_device;
    std::unordered_map<uint32_t, OpenMarker> open_markers;  // by marker id
    std::unordered_map<uint32_t, MarkerData> marker_data;   // by marker id
    std::vector<NvtxRow> nvtx;  // written at the end of the spool, once marker data is known
    std::vector<uint32_t> nvtx_marker_ids;
    std::vector<SyncRow> syncs;  // the device comes from CONTEXT records, which may come later
    std::vector<uint32_t> sync_contexts;
    // kernels-seen counts are cumulative and may be split over chunks: the
    // largest count per name is the latest.
    std::map<std::string, uint64_t> kernels_seen;
  };

  class SpoolVisitor;
  Status kernel_metrics(const format::KernelMetrics& metrics, Spool& spool);
  Status walk_buffer(Spool& spool, std::span<const std::byte> records);
  // One CUPTI record: dispatches on its kind to one of the functions below.
  Status record(Spool& spool, uint32_t kind, const std::byte* at);
  Status api_call(uint32_t kind, const std::byte* at);
  Status kernel(Spool& spool, const std::byte* at);
  Status host_memcpy(Spool& spool, const std::byte* at);
  Status peer_memcpy(Spool& spool, const std::byte* at);
  Status memory_set(Spool& spool, const std::byte* at);
  Status synchronization(Spool& spool, const std::byte* at);
  Status marker(Spool& spool, const std::byte* at);
  Status device(Spool& spool, const std::byte* at);
  // An NVTX range's row from its start: push/pop or start/end, text, thread
  // and domain; the caller adds the end when there is one.
  Result<NvtxRow> range_row(Spool& spool, uint32_t marker_id, const OpenMarker& open);
  Status finish_spool(Spool& spool, const format::SpoolStats& stats);
  Status flush_kernels();

  const std::string* lookup(Spool& spool, uint64_t id);
  Result<int64_t> api_name(uint32_t kind, uint32_t cbid);
  Result<KernelNameIds> kernel_name(Spool& spool, uint64_t id);
  Result<int64_t> domain(Spool& spool, uint64_t id, int64_t first_seen, int64_t global_tid);
  Status counter(const std::string& name, uint64_t value) {
    if (value == 0) return Ok{};
    return writer_.add_counter(name, static_cast<int64_t>(value));
  }

  store::TraceWriter& writer_;
  CudaRowWriter rows_;
  IngestStats stats_;
  std::unordered_map<uint64_t, int64_t> api_names_;             // kind << 32 | cbid -> StringIds id
  std::map<std::string, int64_t> domain_ids_;                   // NVTX domain name -> domainId
  std::map<std::pair<uint32_t, std::string>, bool> gpus_;       // (device id, uuid) written
  std::map<std::pair<uint32_t, uint32_t>, bool> cuda_devices_;  // (pid, device id) written
  std::vector<store::KernelRow> kernels_;
  std::vector<store::ExternalCorrelationRow> correlations_;
  uint64_t old_cupti_buffers_ = 0;
  uint64_t bad_payloads_ = 0;
  uint64_t unwalked_bytes_ = 0;
  uint64_t unmatched_ends_ = 0;
  uint64_t open_ranges_ = 0;
};

const std::string* Ingester::lookup(Spool& spool, uint64_t id) {
  if (id == 0) return nullptr;
  auto it = spool.strings.find(id);
  if (it == spool.strings.end()) {
    ++stats_.unresolved_strings;
    return nullptr;
  }
  return &it->second;
}

Result<int64_t> Ingester::api_name(uint32_t kind, uint32_t cbid) {
  uint64_t key = uint64_t{kind} << 32 | cbid;
  if (auto it = api_names_.find(key); it != api_names_.end()) return it->second;
  bool runtime = kind == CUPTI_ACTIVITY_KIND_RUNTIME;
  std::string_view name = runtime ? runtime_cbid_name(cbid) : driver_cbid_name(cbid);
  std::string text(name);
  if (text.empty()) {
    // A newer CUPTI than the build's headers: keep the call, named by its id.
    ++stats_.unknown_cbids;
    text = std::string(runtime ? "cudaRuntimeApi" : "cuDriverApi") + "_cbid" + std::to_string(cbid);
  }
  STRATA_ASSIGN_OR_RETURN(int64_t id, writer_.intern(text));
  api_names_.emplace(key, id);
  return id;
}

Result<KernelNameIds> Ingester::kernel_name(Spool& spool, uint64_t id) {
  if (auto it = spool.kernel_names.find(id); it != spool.kernel_names.end()) return it->second;
  const std::string* text = lookup(spool, id);
  std::string mangled = text ? *text : (id == 0 ? "<unnamed kernel>" : "<unresolved kernel name>");
  store::KernelNames names = store::kernel_names(mangled);
  KernelNameIds ids;
  STRATA_ASSIGN_OR_RETURN(ids.demangled, writer_.intern(names.demangled));
  STRATA_ASSIGN_OR_RETURN(ids.base, writer_.intern(names.base));
  STRATA_ASSIGN_OR_RETURN(ids.mangled, writer_.intern(names.mangled));
  spool.kernel_names.emplace(id, ids);
  return ids;
}

Result<int64_t> Ingester::domain(Spool& spool, uint64_t id, int64_t first_seen,
                                 int64_t global_tid) {
  const std::string* name = lookup(spool, id);
  if (name == nullptr || name->empty()) return int64_t{0};
  if (auto it = domain_ids_.find(*name); it != domain_ids_.end()) return it->second;
  int64_t domain_id = static_cast<int64_t>(domain_ids_.size()) + 1;
  domain_ids_.emplace(*name, domain_id);
  // nsys names a domain with a NvtxDomainCreate row carrying its text.
  NvtxRow row;
  row.start = first_seen;
  row.event_type = kNvtxDomainCreate;
  row.text = *name;
  row.global_tid = global_tid;
  row.domain_id = domain_id;
  ++stats_.nvtx_events;
  STRATA_TRY(rows_.add(row));
  return domain_id;
}

// One spool's chunks, as the one chunk loop (chunk_visitor.h) hands them
// out. Strings, thread names, process info, drop counters and kernels seen
// are collected as they come; kernel metrics are written as they come (a
// handful per run); CUPTI buffers are remembered and walked once all
// metadata is known, since the agent writes a buffer's strings after it.
class Ingester::SpoolVisitor final : public ChunkVisitor {
 public:
  SpoolVisitor(Ingester& ingester, Spool& spool) : ingester_(ingester), spool_(spool) {}

  bool wants(format::ChunkKind kind) const override {
    using format::ChunkKind;
    switch (kind) {
      case ChunkKind::kCuptiBuffer:
      case ChunkKind::kStrings:
      case ChunkKind::kDropCounters:
      case ChunkKind::kThreadName:
      case ChunkKind::kProcessInfo:
      case ChunkKind::kKernelMetrics:
      case ChunkKind::kKernelsSeen:
        return true;
      default:
        return false;  // other producers' kinds: never in an agent's spool
    }
  }

  Status on_cupti_buffer(const format::Chunk& chunk, const format::CuptiBuffer& buffer) override {
    if (buffer.cupti_version < kMinCuptiVersion) {
      ++ingester_.old_cupti_buffers_;
      return Ok{};
    }
    if (chunk.in_file) {
      buffers_.push_back({chunk.payload, buffer.records});
    } else {
      // A damaged, misaligned payload the reader copied: it lives only until
      // the next chunk. A moved vector keeps its heap block.
      copies_.emplace_back(chunk.payload.begin(), chunk.payload.end());
      std::span<const std::byte> copy = copies_.back();
      buffers_.push_back({copy, copy.subspan(format::kCuptiBufferPrefix)});
    }
    return Ok{};
  }
  Status on_strings(const std::vector<format::StringEntry>& strings) override {
    for (const auto& s : strings) spool_.strings.emplace(s.id, std::string(s.text));
    return Ok{};
  }
  Status on_thread_name(const format::ThreadName& name) override {
    spool_.thread_names[name.tid] = std::string(name.name);
    return Ok{};
  }
  Status on_process_info(const format::ProcessInfo& info) override {
    spool_.exe = std::string(info.exe);
    return Ok{};
  }
  Status on_drop_counters(const std::vector<format::DropCounter>& counters) override {
    // Totals are cumulative: the last value of a kind wins.
    for (const auto& c : counters) spool_.drop_counters[c.kind] = c.total;
    return Ok{};
  }
  Status on_kernels_seen(const std::vector<format::KernelSeen>& seen) override {
    for (const auto& k : seen) {
      uint64_t& launches = spool_.kernels_seen[std::string(k.name)];
      launches = std::max(launches, k.launches);
    }
    return Ok{};
  }
  Status on_kernel_metrics(const format::KernelMetrics& metrics) override {
    return ingester_.kernel_metrics(metrics, spool_);
  }
  void on_malformed(const format::Chunk&, const Error&) override { ++ingester_.bad_payloads_; }

  struct Buffer {
    std::span<const std::byte> payload;  // to release once walked
    std::span<const std::byte> records;
  };
  const std::vector<Buffer>& buffers() const { return buffers_; }

 private:
  Ingester& ingester_;
  Spool& spool_;
  std::vector<Buffer> buffers_;
  std::vector<std::vector<std::byte>> copies_;
};

// One profiled launch: written as it comes (a handful per run).
Status Ingester::kernel_metrics(const format::KernelMetrics& decoded, Spool& spool) {
  store::ProfiledLaunch launch;
  launch.pid = spool.pid;
  launch.device = decoded.header.device;
  launch.correlation_id = static_cast<int64_t>(decoded.header.correlation_id);
  launch.invocation = static_cast<int64_t>(decoded.header.invocation);
  launch.kernel_name = std::string(decoded.kernel_name);
  launch.status = decoded.header.status;
  launch.start_ns = decoded.header.start_ns;
  launch.end_ns = decoded.header.end_ns;
  launch.metrics.reserve(decoded.metrics.size());
  for (const auto& m : decoded.metrics) launch.metrics.emplace_back(std::string(m.name), m.value);
  ++stats_.profiled_launches;
  return store::write_profiled_launch(writer_, launch);
}

// The leading columns of a kernel, memcpy or memset row, which CUPTI's
// records of those kinds carry under the same names. (A synchronization
// record has no deviceId, and its stream needs a fix: it fills its own.)
template <class Record>
void set_activity_columns(const Record& r, int64_t global_pid, store::GpuActivityColumns& row) {
  row.start = static_cast<int64_t>(r.start);
  row.end = static_cast<int64_t>(r.end);
  row.device_id = r.deviceId;
  row.context_id = r.contextId;
  row.stream_id = r.streamId;
  row.correlation_id = r.correlationId;
  row.global_pid = global_pid;
}

// The columns host-device copies (MEMCPY) and peer copies (MEMCPY2) share.
template <class Record>
MemcpyRow memcpy_row(const Record& r, int64_t global_pid) {
  MemcpyRow row;
  set_activity_columns(r, global_pid, row);
  row.bytes = static_cast<int64_t>(r.bytes);
  row.copy_kind = nsys_copy_kind(r.copyKind);
  row.src_kind = nsys_mem_kind(r.srcKind);
  row.dst_kind = nsys_mem_kind(r.dstKind);
  return row;
}

Status Ingester::record(Spool& spool, uint32_t kind, const std::byte* at) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return api_call(kind, at);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return kernel(spool, at);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return host_memcpy(spool, at);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return peer_memcpy(spool, at);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return memory_set(spool, at);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return synchronization(spool, at);
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      auto r = load_record<CUpti_ActivityContext3>(at);
      spool.context_device[r.contextId] = r.deviceId;
      return Ok{};
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      return marker(spool, at);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: {
      auto r = load_record<CUpti_ActivityMarkerData2>(at);
      MarkerData data;
      data.color = r.color;
      data.category = r.category;
      data.has_color =
          (static_cast<uint32_t>(r.flags) & CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB) != 0;
      spool.marker_data[r.id] = data;
      return Ok{};
    }
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return device(spool, at);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      // The id a PyTorch op pushed around this API call: the exact op <->
      // kernel link of torch's op table (analysis/torch_op_table.h).
      auto r = load_record<CUpti_ActivityExternalCorrelation>(at);
      correlations_.push_back({spool.global_pid, static_cast<int64_t>(r.externalKind),
                               static_cast<int64_t>(r.externalId),
                               static_cast<int64_t>(r.correlationId)});
      ++stats_.external_correlations;
      if (correlations_.size() >= kKernelFlush) return flush_kernels();
      return Ok{};
    }
    default:
      // NAME (NVTX resource names) and OVERHEAD records have no table here.
      return Ok{};
  }
}

// RUNTIME and DRIVER: one CUPTI_ACTIVITY_KIND_* row each, named by cbid.
Status Ingester::api_call(uint32_t kind, const std::byte* at) {
  auto r = load_record<CUpti_ActivityAPI>(at);
  STRATA_ASSIGN_OR_RETURN(int64_t name, api_name(kind, r.cbid));
  RuntimeRow row;
  row.start = static_cast<int64_t>(r.start);
  row.end = static_cast<int64_t>(r.end);
  row.event_class = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? 0 : 1;
  row.global_tid =
      store::global_tid(static_cast<int32_t>(r.processId), static_cast<int32_t>(r.threadId));
  row.correlation_id = r.correlationId;
  row.name_id = name;
  row.return_value = r.returnValue;
  ++(kind == CUPTI_ACTIVITY_KIND_RUNTIME ? stats_.runtime_calls : stats_.driver_calls);
  return rows_.add(row);
}

// Kernels are batched (kKernelFlush) for TraceWriter::write_kernels.
Status Ingester::kernel(Spool& spool, const std::byte* at) {
  auto r = load_record<CUpti_ActivityKernel10>(at);
  STRATA_ASSIGN_OR_RETURN(
      KernelNameIds names,
      kernel_name(spool, string_field(at, offsetof(CUpti_ActivityKernel10, name))));
  store::KernelRow row;
  set_activity_columns(r, spool.global_pid, row);
  row.demangled_name = names.demangled;
  row.short_name = names.base;
  row.mangled_name = names.mangled;
  row.grid_x = r.gridX, row.grid_y = r.gridY, row.grid_z = r.gridZ;
  row.block_x = r.blockX, row.block_y = r.blockY, row.block_z = r.blockZ;
  row.registers_per_thread = r.registersPerThread;
  row.static_shared_memory = r.staticSharedMemory;
  row.dynamic_shared_memory = r.dynamicSharedMemory;
  row.shared_memory_executed = r.sharedMemoryExecuted;
  row.local_memory_per_thread = r.localMemoryPerThread;
  // CUDA 13.0: localMemoryTotal (u32) is kept for compatibility and can
  // overflow; localMemoryTotal_v2 is the full value.
  row.local_memory_total = static_cast<int64_t>(r.localMemoryTotal_v2);
  row.grid_id = r.gridId;
  if (r.graphNodeId != 0) row.graph_node_id = static_cast<int64_t>(r.graphNodeId);
  if (r.graphId != 0) row.graph_id = int64_t{r.graphId};
  kernels_.push_back(row);
  ++stats_.kernels;
  if (kernels_.size() >= kKernelFlush) return flush_kernels();
  return Ok{};
}

Status Ingester::host_memcpy(Spool& spool, const std::byte* at) {
  auto r = load_record<CUpti_ActivityMemcpy6>(at);
  MemcpyRow row = memcpy_row(r, spool.global_pid);
  if (r.graphNodeId != 0) row.graph_node_id = static_cast<int64_t>(r.graphNodeId);
  row.copy_count = r.copyCount == 0 ? 1 : static_cast<int64_t>(r.copyCount);
  ++stats_.memcpys;
  return rows_.add(row);
}

Status Ingester::peer_memcpy(Spool& spool, const std::byte* at) {
  auto r = load_record<CUpti_ActivityMemcpyPtoP4>(at);
  MemcpyRow row = memcpy_row(r, spool.global_pid);
  row.src_device_id = int64_t{r.srcDeviceId};
  row.src_context_id = int64_t{r.srcContextId};
  row.dst_device_id = int64_t{r.dstDeviceId};
  row.dst_context_id = int64_t{r.dstContextId};
  if (r.graphNodeId != 0) row.graph_node_id = static_cast<int64_t>(r.graphNodeId);
  ++stats_.memcpys;
  return rows_.add(row);
}

Status Ingester::memory_set(Spool& spool, const std::byte* at) {
  auto r = load_record<CUpti_ActivityMemset4>(at);
  MemsetRow row;
  set_activity_columns(r, spool.global_pid, row);
  row.value = r.value;
  row.bytes = static_cast<int64_t>(r.bytes);
  if (r.graphNodeId != 0) row.graph_node_id = static_cast<int64_t>(r.graphNodeId);
  row.mem_kind = nsys_mem_kind(r.memoryKind);
  ++stats_.memsets;
  return rows_.add(row);
}

// Kept until the spool ends: the device comes from CONTEXT records, which
// may come later.
Status Ingester::synchronization(Spool& spool, const std::byte* at) {
  auto r = load_record<CUpti_ActivitySynchronization2>(at);
  SyncRow row;
  row.start = static_cast<int64_t>(r.start);
  row.end = static_cast<int64_t>(r.end);
  row.context_id = r.contextId;
  // CUDA 13.0: a context synchronize has no stream; CUPTI puts
  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (all ones) there.
  row.stream_id = r.streamId == 0xFFFFFFFFu ? 0 : r.streamId;
  row.correlation_id = r.correlationId;
  row.global_pid = spool.global_pid;
  row.sync_type = nsys_sync_type(r.type);
  row.event_id = r.cudaEventId == 0xFFFFFFFFu ? 0 : r.cudaEventId;
  if (r.cudaEventSyncId != 0 && r.cudaEventSyncId != ~uint64_t{0}) {
    row.event_sync_id = static_cast<int64_t>(r.cudaEventSyncId);
  }
  spool.syncs.push_back(row);
  spool.sync_contexts.push_back(r.contextId);
  ++stats_.syncs;
  return Ok{};
}

Result<NvtxRow> Ingester::range_row(Spool& spool, uint32_t marker_id, const OpenMarker& open) {
  NvtxRow row;
  row.start = open.start;
  // CUDA 13.0's CUPTI gives push/pop ranges the THREAD object kind and
  // start/end ranges (which may end on another thread) the PROCESS kind.
  const bool push_pop = open.object_kind == CUPTI_ACTIVITY_OBJECT_THREAD;
  row.event_type = push_pop ? kNvtxPushPop : kNvtxStartEnd;
  if (!push_pop) row.range_id = int64_t{marker_id};
  if (const std::string* text = lookup(spool, open.name_id)) row.text = *text;
  row.global_tid = open.global_tid;
  STRATA_ASSIGN_OR_RETURN(row.domain_id,
                          domain(spool, open.domain_id, open.start, open.global_tid));
  return row;
}

// NVTX: a range's start is kept until its end arrives; marks and ended
// ranges become rows written when the spool ends (their MARKER_DATA, with
// color and category, may come later).
Status Ingester::marker(Spool& spool, const std::byte* at) {
  auto r = load_record<CUpti_ActivityMarker2>(at);
  int64_t tid = 0;
  int64_t pid = spool.pid;
  if (r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
      r.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    pid = r.objectId.pt.processId != 0 ? r.objectId.pt.processId : spool.pid;
    tid = r.objectId.pt.threadId;
  }
  int64_t gtid = store::global_tid(static_cast<int32_t>(pid), static_cast<int32_t>(tid));
  uint64_t name = string_field(at, offsetof(CUpti_ActivityMarker2, name));
  uint64_t dom = string_field(at, offsetof(CUpti_ActivityMarker2, domain));
  uint32_t flags = static_cast<uint32_t>(r.flags);
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    spool.open_markers[r.id] = {static_cast<int64_t>(r.timestamp), gtid,
                                static_cast<uint32_t>(r.objectKind), name, dom};
    return Ok{};
  }
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = spool.open_markers.find(r.id);
    if (it == spool.open_markers.end()) {
      ++unmatched_ends_;
      return Ok{};
    }
    STRATA_ASSIGN_OR_RETURN(NvtxRow row, range_row(spool, r.id, it->second));
    row.end = static_cast<int64_t>(r.timestamp);
    if (row.event_type == kNvtxStartEnd) row.end_global_tid = gtid;
    spool.nvtx.push_back(std::move(row));
    spool.nvtx_marker_ids.push_back(r.id);
    spool.open_markers.erase(it);
    return Ok{};
  }
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    NvtxRow row;
    row.start = static_cast<int64_t>(r.timestamp);
    row.event_type = kNvtxMark;
    if (const std::string* text = lookup(spool, name)) row.text = *text;
    row.global_tid = gtid;
    STRATA_ASSIGN_OR_RETURN(row.domain_id, domain(spool, dom, row.start, gtid));
    spool.nvtx.push_back(std::move(row));
    spool.nvtx_marker_ids.push_back(r.id);
  }
  return Ok{};
}

// TARGET_INFO_GPU once per (device, uuid) and TARGET_INFO_CUDA_DEVICE once
// per (pid, device) over the whole run.
Status Ingester::device(Spool& spool, const std::byte* at) {
  auto r = load_record<CUpti_ActivityDevice5>(at);
  ++stats_.devices;
  const std::string* name = lookup(spool, string_field(at, offsetof(CUpti_ActivityDevice5, name)));
  std::string uuid = uuid_text(r.uuid);
  const uint32_t device = r.id;
  if (!gpus_.count({device, uuid})) {
    gpus_[{device, uuid}] = true;
    STRATA_TRY(rows_.add_gpu(gpu_info_row(r, name ? *name : "", uuid)));
  }
  if (!cuda_devices_.count({spool.pid, device})) {
    cuda_devices_[{spool.pid, device}] = true;
    STRATA_TRY(rows_.add_cuda_device(r.id, r.id, spool.pid));
  }
  return Ok{};
}

Status Ingester::walk_buffer(Spool& spool, std::span<const std::byte> records) {
  Status status = Ok{};
  WalkStop stop = walk_records(records, [&](uint32_t kind, const std::byte* at) {
    if (status) status = record(spool, kind, at);
  });
  if (!status) return status;
  stats_.records += stop.records;
  if (!stop.complete) {
    ++stats_.unknown_records;
    unwalked_bytes_ += stop.bytes_left;
  }
  return Ok{};
}

// Kernels and external correlation records, batched.
Status Ingester::flush_kernels() {
  if (!correlations_.empty()) {
    STRATA_TRY(store::write_external_correlations(writer_, correlations_));
    correlations_.clear();
  }
  if (kernels_.empty()) return Ok{};
  Status st = writer_.write_kernels(kernels_);
  kernels_.clear();
  return st;
}

Status Ingester::finish_spool(Spool& spool, const format::SpoolStats& stats) {
  for (size_t i = 0; i < spool.syncs.size(); ++i) {
    auto it = spool.context_device.find(spool.sync_contexts[i]);
    spool.syncs[i].device_id = it == spool.context_device.end() ? 0 : it->second;
    STRATA_TRY(rows_.add(spool.syncs[i]));
  }
  for (size_t i = 0; i < spool.nvtx.size(); ++i) {
    NvtxRow& row = spool.nvtx[i];
    if (auto it = spool.marker_data.find(spool.nvtx_marker_ids[i]); it != spool.marker_data.end()) {
      if (it->second.has_color) row.color = it->second.color;
      if (it->second.category != 0) row.category = it->second.category;
    }
    ++stats_.nvtx_events;
    STRATA_TRY(rows_.add(row));
  }
  // Ranges still open when the process ended (or whose end was lost) are
  // kept with no end, as nsys keeps them.
  for (const auto& [id, open] : spool.open_markers) {
    STRATA_ASSIGN_OR_RETURN(NvtxRow row, range_row(spool, id, open));
    ++open_ranges_;
    ++stats_.nvtx_events;
    STRATA_TRY(rows_.add(row));
  }
  for (const auto& [tid, name] : spool.thread_names) {
    STRATA_ASSIGN_OR_RETURN(int64_t id, writer_.intern(name));
    STRATA_TRY(rows_.add_thread_name(
        store::global_tid(static_cast<int32_t>(spool.pid), static_cast<int32_t>(tid)), id));
  }
  STRATA_TRY(rows_.add_process(spool.global_pid, spool.pid, spool.exe));
  if (!spool.kernels_seen.empty()) {
    std::vector<store::KernelSeenRow> seen;
    for (const auto& [name, launches] : spool.kernels_seen) {
      seen.push_back({spool.pid, name, static_cast<int64_t>(launches)});
    }
    stats_.kernel_names_seen += seen.size();
    STRATA_TRY(store::write_kernels_seen(writer_, seen));
  }

  stats_.damaged_chunks += stats.crc_failures + stats.resyncs;
  stats_.truncated_bytes += stats.truncated_bytes;
  stats_.unknown_chunk_kinds += stats.unknown_kinds;
  bool crashed = !stats.end_seen || !stats.clean_end;
  if (crashed) ++stats_.crashed_processes;
  std::vector<std::pair<std::string, uint64_t>> counters = {
      {"spool.crc_failures", stats.crc_failures},
      {"spool.resyncs", stats.resyncs},
      {"spool.skipped_bytes", stats.skipped_bytes},
      {"spool.truncated_bytes", stats.truncated_bytes},
      {"spool.unknown_chunk_kinds", stats.unknown_kinds},
      {"spool.chunks_after_end", stats.chunks_after_end},
      {"spool.no_end_marker", stats.end_seen ? 0u : 1u},
      {"spool.fatal_signal_end", stats.end_seen && !stats.clean_end ? 1u : 0u},
      {"agent.spool_write_errors", stats.end ? stats.end->write_errors : 0},
  };
  for (const auto& [kind, total] : spool.drop_counters) {
    stats_.agent_dropped += total;
    counters.emplace_back(
        std::string("agent.dropped.") + format::drop_counter_name(kind) +
            (format::drop_counter_name(kind) == std::string("unknown") ? std::to_string(kind) : ""),
        total);
  }
  for (const auto& [name, value] : counters) {
    STRATA_TRY(counter(name, value));
  }
  return Ok{};
}

Status Ingester::ingest(const std::string& path) {
  auto reader = format::SpoolReader::open(path);
  if (!reader) {
    ++stats_.unreadable_spools;
    stats_.problems.push_back(reader.error().message);
    return counter("spool.unreadable", 1);
  }
  ++stats_.spools;
  Spool spool;
  spool.pid = reader->header().pid;
  spool.global_pid = store::global_tid(static_cast<int32_t>(spool.pid), 0);

  // One read of the file; the CUPTI buffers are walked once all metadata is
  // known (SpoolVisitor).
  SpoolVisitor visitor(*this, spool);
  STRATA_TRY(visit_chunks(*reader, visitor));
  for (const SpoolVisitor::Buffer& buffer : visitor.buffers()) {
    STRATA_TRY(walk_buffer(spool, buffer.records));
    reader->release(buffer.payload);  // or the walk brings the whole spool back into memory
  }
  STRATA_TRY(flush_kernels());
  return finish_spool(spool, reader->stats());
}

Status Ingester::finish() {
  STRATA_TRY(flush_kernels());
  STRATA_TRY(rows_.flush());
  std::pair<const char*, uint64_t> counters[] = {
      {"ingest.bad_payloads", bad_payloads_},
      {"ingest.old_cupti_buffers", old_cupti_buffers_},
      {"ingest.unknown_record_kinds", stats_.unknown_records},
      {"ingest.unwalked_bytes", unwalked_bytes_},
      {"ingest.unresolved_strings", stats_.unresolved_strings},
      {"ingest.unknown_cbids", stats_.unknown_cbids},
      {"ingest.unmatched_nvtx_ends", unmatched_ends_},
      {"ingest.open_nvtx_ranges", open_ranges_},
  };
  for (const auto& [name, value] : counters) {
    STRATA_TRY(counter(name, value));
  }
  return Ok{};
}

}  // namespace

Result<IngestStats> ingest_spools(const std::vector<std::string>& spool_paths,
                                  store::TraceWriter& writer) {
  STRATA_ASSIGN_OR_RETURN(CudaRowWriter rows, CudaRowWriter::create(writer));
  Ingester ingester(writer, std::move(rows));
  for (const auto& path : spool_paths) {
    STRATA_TRY(ingester.ingest(path));
  }
  STRATA_TRY(ingester.finish());
  return std::move(ingester.stats());
}

}  // namespace strata::import
