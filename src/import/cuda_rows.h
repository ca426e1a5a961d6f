// Writers for the nsys-schema CUDA/NVTX tables that TraceWriter has no method
// for (RUNTIME, MEMCPY, MEMSET, SYNCHRONIZATION, NVTX_EVENTS, ThreadNames,
// PROCESSES, TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE), through
// TraceWriter::handle() inside the writer's transaction. Column names and
// meanings are the reference export's (shared/reference/nsys-sqlite-schema.sql);
// enum columns already hold nsys's numbering (see cupti_ingest.cc for the mapping
// from CUPTI's).
//
// Rows are buffered and inserted many per statement (one sqlite3_step per
// batch; bench/ingest_speed.cc). Call flush() before TraceWriter::commit().
// Threading: one thread, the writer's. Ownership: holds prepared statements
// on the writer's connection; destroy before the writer commits or closes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/trace_db.h"

namespace strata::import {

struct RuntimeRow {
  int64_t start = 0, end = 0;
  int64_t event_class = 0;  // ENUM_NSYS_EVENT_CLASS: 0 runtime, 1 driver
  int64_t global_tid = 0;
  int64_t correlation_id = 0;
  int64_t name_id = 0;
  int64_t return_value = 0;
};

struct MemcpyRow : store::GpuActivityColumns {
  int64_t bytes = 0;
  int64_t copy_kind = 0;               // ENUM_CUDA_MEMCPY_OPER
  int64_t src_kind = 0, dst_kind = 0;  // ENUM_CUDA_MEM_KIND
  std::optional<int64_t> src_device_id, src_context_id, dst_device_id,
      dst_context_id;  // peer copies
  std::optional<int64_t> graph_node_id;
  int64_t copy_count = 1;
};

struct MemsetRow : store::GpuActivityColumns {
  int64_t value = 0, bytes = 0;
  std::optional<int64_t> graph_node_id;
  int64_t mem_kind = 7;  // ENUM_CUDA_MEM_KIND (7 unknown)
};

struct SyncRow : store::GpuActivityColumns {
  int64_t sync_type = 0;  // ENUM_CUPTI_SYNC_TYPE
  int64_t event_id = 0;
  std::optional<int64_t> event_sync_id;
};

struct NvtxRow {
  int64_t start = 0;
  std::optional<int64_t> end;  // NULL for marks and ranges never closed
  int64_t event_type = 0;  // ENUM_NSYS_EVENT_TYPE (59 push/pop, 60 start/end, 34 mark, 75 domain)
  std::optional<int64_t> range_id;
  std::optional<int64_t> category;
  std::optional<int64_t> color;  // ARGB
  std::optional<std::string> text;
  int64_t global_tid = 0;
  std::optional<int64_t> end_global_tid;
  int64_t domain_id = 0;  // 0: the default domain
};

struct GpuInfoRow {
  int64_t id = 0;
  std::string name;
  std::string uuid;
  int64_t l2_cache_size = 0, total_memory = 0, memory_bandwidth = 0, clock_rate_hz = 0;
  int64_t sm_count = 0, threads_per_warp = 0, async_engines = 0, max_warps_per_sm = 0;
  int64_t max_blocks_per_sm = 0, max_threads_per_block = 0, max_registers_per_block = 0;
  int64_t max_shmem_per_block = 0, max_shmem_per_block_optin = 0, max_shmem_per_sm = 0;
  int64_t max_registers_per_sm = 0, constant_memory = 0, max_ipc = 0;
  int64_t max_block_dim[3] = {}, max_grid_dim[3] = {};
  int64_t compute_major = 0, compute_minor = 0;
};

class CudaRowWriter {
 public:
  static Result<CudaRowWriter> create(store::TraceWriter& writer);
  CudaRowWriter(CudaRowWriter&&) noexcept;
  CudaRowWriter& operator=(CudaRowWriter&&) noexcept;
  ~CudaRowWriter();

  Status add(const RuntimeRow& row);
  Status add(const MemcpyRow& row);
  Status add(const MemsetRow& row);
  Status add(const SyncRow& row);
  Status add(const NvtxRow& row);
  Status add_thread_name(int64_t global_tid, int64_t name_id);
  Status add_process(int64_t global_pid, int64_t pid, const std::string& name);
  Status add_gpu(const GpuInfoRow& row);
  Status add_cuda_device(int64_t gpu_id, int64_t cuda_id, int64_t pid);

  // Inserts every buffered row.
  Status flush();

 private:
  struct Impl;
  explicit CudaRowWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::import
