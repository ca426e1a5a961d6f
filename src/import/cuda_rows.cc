#include "import/cuda_rows.h"

#include <sqlite3.h>

#include <string_view>

#include "store/sqlite_util.h"

namespace strata::import {
namespace {

namespace sql = store::sql;

// One column value of a pending row. Texts are owned: rows outlive the
// caller's strings until the batch is inserted.
struct Cell {
  enum Type : uint8_t { kNull, kInt, kText } type = kNull;
  int64_t value = 0;
  std::string text;
};

Cell cell(int64_t v) {
  return Cell{Cell::kInt, v, {}};
}
Cell cell(const std::optional<int64_t>& v) {
  return v ? cell(*v) : Cell{};
}
Cell cell(const std::optional<std::string>& v) {
  return v ? Cell{Cell::kText, 0, *v} : Cell{};
}
Cell text_cell(std::string v) {
  return Cell{Cell::kText, 0, std::move(v)};
}

// Inserts rows of one table `batch` at a time with one multi-row INSERT, and
// the remainder one by one at flush.
class Inserter {
 public:
  Inserter(sqlite3* db, std::string table, std::vector<std::string> columns, int batch)
      : db_(db), table_(std::move(table)), columns_(std::move(columns)), batch_(batch) {
    pending_.reserve(static_cast<size_t>(batch_) * columns_.size());
  }

  Status add(std::vector<Cell>&& row) {
    for (auto& c : row) pending_.push_back(std::move(c));
    if (pending_.size() >= static_cast<size_t>(batch_) * columns_.size()) return insert(batch_);
    return Ok{};
  }
  Status flush() {
    while (!pending_.empty()) {
      if (auto st = insert(1); !st) return st;
    }
    return Ok{};
  }

 private:
  Result<sql::Statement*> statement(int rows) {
    sql::Statement& slot = rows == 1 ? single_ : many_;
    if (slot.get() != nullptr) return &slot;
    std::string text = "INSERT INTO " + table_ + " (";
    for (size_t c = 0; c < columns_.size(); ++c) text += (c ? ", " : "") + columns_[c];
    text += ") VALUES ";
    std::string tuple = "(?";
    for (size_t c = 1; c < columns_.size(); ++c) tuple += ",?";
    tuple += ")";
    for (int r = 0; r < rows; ++r) text += (r ? "," : "") + tuple;
    STRATA_ASSIGN_OR_RETURN(slot, sql::Statement::prepare(db_, text, table_));
    return &slot;
  }

  // Inserts the first `rows` pending rows.
  Status insert(int rows) {
    STRATA_ASSIGN_OR_RETURN(sql::Statement * statement_ptr, statement(rows));
    sql::Statement& stmt = *statement_ptr;
    size_t cells = static_cast<size_t>(rows) * columns_.size();
    for (size_t i = 0; i < cells; ++i) {
      const Cell& c = pending_[i];
      int index = static_cast<int>(i) + 1;
      switch (c.type) {
        case Cell::kNull:
          stmt.bind_null(index);
          break;
        case Cell::kInt:
          stmt.bind(index, c.value);
          break;
        case Cell::kText:
          // The cell lives until the step below: no copy needed.
          sqlite3_bind_text(stmt.get(), index, c.text.data(), static_cast<int>(c.text.size()),
                            SQLITE_STATIC);
          break;
      }
    }
    int rc = stmt.step();
    sqlite3_reset(stmt.get());
    if (rc != SQLITE_DONE) return sql::error(db_, table_);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(cells));
    return Ok{};
  }

  sqlite3* db_;
  std::string table_;
  std::vector<std::string> columns_;
  int batch_;
  std::vector<Cell> pending_;
  sql::Statement single_, many_;
};

// Rows per statement: one step per 64 rows halves a bulk insert's cost
// (bench/store_bulk_insert.cc measured it for kernels).
constexpr int kBatch = 64;

}  // namespace

struct CudaRowWriter::Impl {
  explicit Impl(sqlite3* db)
      : runtime(
            db, "CUPTI_ACTIVITY_KIND_RUNTIME",
            {"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"},
            kBatch),
        memcpy(db, "CUPTI_ACTIVITY_KIND_MEMCPY",
               {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                "bytes", "copyKind", "srcKind", "dstKind", "srcDeviceId", "srcContextId",
                "dstDeviceId", "dstContextId", "graphNodeId", "copyCount"},
               kBatch),
        memset(db, "CUPTI_ACTIVITY_KIND_MEMSET",
               {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                "value", "bytes", "graphNodeId", "memKind"},
               kBatch),
        sync(db, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
             {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
              "syncType", "eventId", "eventSyncId"},
             kBatch),
        nvtx(db, "NVTX_EVENTS",
             {"start", "end", "eventType", "rangeId", "category", "color", "text", "globalTid",
              "endGlobalTid", "domainId"},
             kBatch),
        threads(db, "ThreadNames", {"nameId", "priority", "globalTid"}, 1),
        processes(db, "PROCESSES", {"globalPid", "pid", "name"}, 1),
        gpus(db, "TARGET_INFO_GPU",
             {"vmId",
              "id",
              "name",
              "isDiscrete",
              "l2CacheSize",
              "totalMemory",
              "memoryBandwidth",
              "clockRate",
              "smCount",
              "uuid",
              "cuDevice",
              "constantMemory",
              "maxIPC",
              "maxRegistersPerBlock",
              "maxShmemPerBlock",
              "maxShmemPerBlockOptin",
              "maxShmemPerSm",
              "maxRegistersPerSm",
              "threadsPerWarp",
              "asyncEngines",
              "maxWarpsPerSm",
              "maxBlocksPerSm",
              "maxThreadsPerBlock",
              "maxBlockDimX",
              "maxBlockDimY",
              "maxBlockDimZ",
              "maxGridDimX",
              "maxGridDimY",
              "maxGridDimZ",
              "computeMajor",
              "computeMinor",
              "smMajor",
              "smMinor"},
             1),
        devices(db, "TARGET_INFO_CUDA_DEVICE", {"gpuId", "cudaId", "pid"}, 1) {}

  Inserter runtime, memcpy, memset, sync, nvtx, threads, processes, gpus, devices;
};

Result<CudaRowWriter> CudaRowWriter::create(store::TraceWriter& writer) {
  if (writer.handle() == nullptr) return make_error("the trace is not open for writing");
  return CudaRowWriter(std::make_unique<Impl>(writer.handle()));
}

CudaRowWriter::CudaRowWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaRowWriter::CudaRowWriter(CudaRowWriter&&) noexcept = default;
CudaRowWriter& CudaRowWriter::operator=(CudaRowWriter&&) noexcept = default;
CudaRowWriter::~CudaRowWriter() = default;

Status CudaRowWriter::add(const RuntimeRow& r) {
  return impl_->runtime.add({cell(r.start), cell(r.end), cell(r.event_class), cell(r.global_tid),
                             cell(r.correlation_id), cell(r.name_id), cell(r.return_value)});
}

Status CudaRowWriter::add(const MemcpyRow& r) {
  return impl_->memcpy.add({cell(r.start), cell(r.end), cell(r.device_id), cell(r.context_id),
                            cell(r.stream_id), cell(r.correlation_id), cell(r.global_pid),
                            cell(r.bytes), cell(r.copy_kind), cell(r.src_kind), cell(r.dst_kind),
                            cell(r.src_device_id), cell(r.src_context_id), cell(r.dst_device_id),
                            cell(r.dst_context_id), cell(r.graph_node_id), cell(r.copy_count)});
}

Status CudaRowWriter::add(const MemsetRow& r) {
  return impl_->memset.add({cell(r.start), cell(r.end), cell(r.device_id), cell(r.context_id),
                            cell(r.stream_id), cell(r.correlation_id), cell(r.global_pid),
                            cell(r.value), cell(r.bytes), cell(r.graph_node_id), cell(r.mem_kind)});
}

Status CudaRowWriter::add(const SyncRow& r) {
  return impl_->sync.add({cell(r.start), cell(r.end), cell(r.device_id), cell(r.context_id),
                          cell(r.stream_id), cell(r.correlation_id), cell(r.global_pid),
                          cell(r.sync_type), cell(r.event_id), cell(r.event_sync_id)});
}

Status CudaRowWriter::add(const NvtxRow& r) {
  return impl_->nvtx.add({cell(r.start), cell(r.end), cell(r.event_type), cell(r.range_id),
                          cell(r.category), cell(r.color), cell(r.text), cell(r.global_tid),
                          cell(r.end_global_tid), cell(r.domain_id)});
}

Status CudaRowWriter::add_thread_name(int64_t global_tid, int64_t name_id) {
  return impl_->threads.add({cell(name_id), Cell{}, cell(global_tid)});
}

Status CudaRowWriter::add_process(int64_t global_pid, int64_t pid, const std::string& name) {
  return impl_->processes.add({cell(global_pid), cell(pid), text_cell(name)});
}

Status CudaRowWriter::add_gpu(const GpuInfoRow& g) {
  return impl_->gpus.add({cell(0),
                          cell(g.id),
                          text_cell(g.name),
                          cell(1),
                          cell(g.l2_cache_size),
                          cell(g.total_memory),
                          cell(g.memory_bandwidth),
                          cell(g.clock_rate_hz),
                          cell(g.sm_count),
                          text_cell(g.uuid),
                          cell(g.id),
                          cell(g.constant_memory),
                          cell(g.max_ipc),
                          cell(g.max_registers_per_block),
                          cell(g.max_shmem_per_block),
                          cell(g.max_shmem_per_block_optin),
                          cell(g.max_shmem_per_sm),
                          cell(g.max_registers_per_sm),
                          cell(g.threads_per_warp),
                          cell(g.async_engines),
                          cell(g.max_warps_per_sm),
                          cell(g.max_blocks_per_sm),
                          cell(g.max_threads_per_block),
                          cell(g.max_block_dim[0]),
                          cell(g.max_block_dim[1]),
                          cell(g.max_block_dim[2]),
                          cell(g.max_grid_dim[0]),
                          cell(g.max_grid_dim[1]),
                          cell(g.max_grid_dim[2]),
                          cell(g.compute_major),
                          cell(g.compute_minor),
                          cell(g.compute_major),
                          cell(g.compute_minor)});
}

Status CudaRowWriter::add_cuda_device(int64_t gpu_id, int64_t cuda_id, int64_t pid) {
  return impl_->devices.add({cell(gpu_id), cell(cuda_id), cell(pid)});
}

Status CudaRowWriter::flush() {
  for (Inserter* i : {&impl_->runtime, &impl_->memcpy, &impl_->memset, &impl_->sync, &impl_->nvtx,
                      &impl_->threads, &impl_->processes, &impl_->gpus, &impl_->devices}) {
    if (auto st = i->flush(); !st) return st;
  }
  return Ok{};
}

}  // namespace strata::import
