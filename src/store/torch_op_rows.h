// PyTorch ops in the trace database (issue 18, docs/formats.md):
// strata_torch_ops, strata_torch_status and strata_external_correlation,
// written by import (torch-PID.bin spools, the agent's CUPTI buffers) and
// read back, with the CUDA rows they link to, for torch.profiler's op table
// (analysis/torch_op_table.h).
//
// Threading: as the TraceWriter/TraceReader passed in (one thread at a time).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/trace_db.h"

namespace strata::store {

// One row of strata_torch_ops; names are StringIds ids.
struct TorchOpRow {
  int64_t start = 0;
  int64_t end = 0;
  int64_t global_tid = 0;
  int64_t name_id = 0;
  int64_t external_id = 0;  // 0: none
  int64_t seq = -1;
  int64_t depth = 0;
  int64_t scope = 0;
  int64_t flags = 0;
  std::optional<int64_t> shapes_id;
  std::optional<int64_t> stack_id;
};

struct TorchStatusRow {
  int64_t global_pid = 0;
  int64_t status = 0;  // format::TorchStatus
  std::string text;
};

struct ExternalCorrelationRow {
  int64_t global_pid = 0;
  int64_t external_kind = 0;
  int64_t external_id = 0;
  int64_t correlation_id = 0;
};

Status write_torch_ops(TraceWriter& writer, std::span<const TorchOpRow> rows);
Status write_torch_status(TraceWriter& writer, const TorchStatusRow& row);
Status write_external_correlations(TraceWriter& writer,
                                   std::span<const ExternalCorrelationRow> rows);

// Whether the trace holds any strata_torch_ops row: what makes op_sum print
// torch.profiler's table rather than the NVTX one. A file without the table
// (older traces, nsys exports) is "no"; an unreadable one is an error.
Result<bool> torch_ops_present(const TraceReader& reader);

// A CUDA API call, with its name resolved.
struct TorchApiCall {
  int64_t start = 0, end = 0;
  int64_t global_tid = 0;
  int64_t correlation_id = 0;
  std::string name;
};

// A kernel, copy or memset, named as torch.profiler names it: the kernel's
// demangled name, "Memcpy HtoD (Pageable -> Device)", "Memset (Device)".
struct TorchDeviceActivity {
  int64_t start = 0, end = 0;
  int64_t global_pid = 0;
  int64_t correlation_id = 0;
  std::string name;
};

struct TorchOp {
  int64_t start = 0, end = 0;
  int64_t global_tid = 0;
  std::string name;
  int64_t external_id = 0;
  int64_t seq = -1;
  int64_t scope = 0;
  int64_t flags = 0;
  std::optional<std::string> shapes;  // nullopt: not recorded
  std::optional<std::string> stack;   // frames joined by '\n', innermost first
};

// Everything the op table reads, names resolved.
struct TorchOpRows {
  std::vector<TorchOp> ops;
  std::vector<TorchApiCall> runtime;  // CUDA runtime calls, and the driver's kernel launches
  std::vector<TorchDeviceActivity> device;
  std::vector<ExternalCorrelationRow> correlations;
  std::vector<TorchStatusRow> statuses;
};

// Reads the tables above (absent tables read as empty). The error is one line
// naming the file and the table.
Result<TorchOpRows> load_torch_op_rows(const TraceReader& reader);

// What the import's clock link reads (import/torch_op_links.h): each op's span
// on its thread and each CUDA API call's start.
struct OpSpan {
  int64_t global_tid = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t depth = 0;
  int64_t external_id = 0;
  int64_t flags = 0;  // format::TorchOpFlag bits
};

struct CallStart {
  int64_t global_tid = 0;
  int64_t start = 0;
  int64_t correlation_id = 0;
};

struct ClockLinkRows {
  std::vector<int64_t> pushed_pids;  // globalPids with strata_external_correlation rows
  std::vector<OpSpan> ops;
  std::vector<CallStart> calls;  // runtime and driver calls
};

// Reads them in `writer`'s open transaction (absent tables read as empty).
Result<ClockLinkRows> load_clock_link_rows(TraceWriter& writer);

// torch's (Kineto's) name of a copy: "Memcpy HtoD (Pageable -> Device)";
// copy_kind is ENUM_CUDA_MEMCPY_OPER's id, the kinds ENUM_CUDA_MEM_KIND's.
std::string torch_memcpy_name(int64_t copy_kind, int64_t src_kind, int64_t dst_kind);
std::string torch_memset_name(int64_t mem_kind);

}  // namespace strata::store
