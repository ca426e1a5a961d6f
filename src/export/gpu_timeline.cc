#include "export/gpu_timeline.h"


#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "analysis/gpu_summary.h"
#include "analysis/torch_op_profile.h"
#include "common/global_id.h"

namespace strata::exporter {
namespace {

using store::GpuTables;

// v[i], or 0 where the load did not fill the column.
template <class T>
T at(const std::vector<T>& v, size_t i) {
  return i < v.size() ? v[i] : T{};
}

std::string string_or_empty(const GpuTables& t, int64_t id) {
  const std::string* s = id == store::kNoString ? nullptr : t.string(id);
  return s == nullptr ? std::string() : *s;
}

// The text of NVTX row i: its textId's string (empty when not in StringIds)
// when it has a textId, else its text column.
std::string nvtx_text(const GpuTables& t, size_t i) {
  const auto& n = t.nvtx;
  if (n.text_id[i] != store::kNoString) return string_or_empty(t, n.text_id[i]);
  return n.text_index[i] >= 0 ? n.texts[static_cast<size_t>(n.text_index[i])] : std::string();
}

void add_api_calls(const GpuTables& t, GpuTimeline& out) {
  const auto& r = t.runtime;
  for (size_t i = 0; i < r.size(); ++i) {
    TimelineApiCall c;
    c.start = r.start[i];
    c.end = r.end[i];
    c.global_tid = r.global_tid[i];
    c.correlation_id = r.correlation_id[i];
    c.name = string_or_empty(t, r.name_id[i]);
    c.driver = at(r.event_class, i) == 1;  // ENUM_NSYS_EVENT_CLASS: 0 runtime, 1 driver
    out.api_calls.push_back(std::move(c));
  }
}

void add_kernels(const GpuTables& t, GpuTimeline& out) {
  const auto& k = t.kernels;
  const auto& l = k.launch;
  for (size_t i = 0; i < k.size(); ++i) {
    TimelineGpuOp op;
    op.kind = GpuOpKind::kKernel;
    op.start = k.start[i];
    op.end = k.end[i];
    op.global_pid = at(k.global_pid, i);
    op.device_id = at(k.device_id, i);
    op.stream_id = at(l.stream_id, i);
    op.correlation_id = at(k.correlation_id, i);
    op.name = string_or_empty(t, k.name_id[i]);  // demangled, as cuda_gpu_kern_sum names kernels
    op.grid = i < l.grid.size() ? l.grid[i] : std::array<int64_t, 3>{};
    op.block = i < l.block.size() ? l.block[i] : std::array<int64_t, 3>{};
    op.registers_per_thread = at(l.registers_per_thread, i);
    op.static_shared_memory = at(l.static_shared_memory, i);
    op.dynamic_shared_memory = at(l.dynamic_shared_memory, i);
    out.gpu_ops.push_back(std::move(op));
  }
}

void add_mem_ops(const GpuTables& t, const store::MemOpColumns& m, GpuOpKind kind,
                 GpuTimeline& out) {
  for (size_t i = 0; i < m.size(); ++i) {
    TimelineGpuOp op;
    op.kind = kind;
    op.start = m.start[i];
    op.end = m.end[i];
    op.global_pid = at(m.global_pid, i);
    op.device_id = at(m.device_id, i);
    op.stream_id = at(m.stream_id, i);
    op.correlation_id = at(m.correlation_id, i);
    op.bytes = m.bytes[i];
    if (kind == GpuOpKind::kMemset) {
      op.name = "[CUDA memset]";
    } else {
      // nsys's names ("[CUDA memcpy Host-to-Device]"); a kind the enum lacks
      // still shows, unlabelled, rather than vanishing from the timeline.
      auto label = t.memcpy_labels.find(at(m.copy_kind, i));
      if (label != t.memcpy_labels.end()) op.copy_kind = label->second;
      op.name = op.copy_kind.empty() ? "[CUDA memcpy]" : "[CUDA memcpy " + op.copy_kind + "]";
    }
    out.gpu_ops.push_back(std::move(op));
  }
}

void add_nvtx_ranges(const GpuTables& t, GpuTimeline& out) {
  const auto& n = t.nvtx;
  std::map<std::pair<int64_t, int64_t>, std::string> domains;
  for (const auto& [key, row] : analysis::nvtx_domain_rows(n)) {
    domains.emplace(key, nvtx_text(t, row));
  }
  std::vector<size_t> rows;
  for (size_t i = 0; i < n.size(); ++i) {
    if (n.event_type[i] != store::kNvtxDomainCreate) rows.push_back(i);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [&](size_t a, size_t b) { return n.start[a] < n.start[b]; });
  for (size_t i : rows) {
    TimelineNvtxRange r;
    r.start = n.start[i];
    r.end = n.end[i];
    if (r.end == store::NvtxColumns::kNoEnd) {
      r.end = std::max(r.start, n.last_timestamp);
      r.unterminated = true;
    }
    r.global_tid = n.global_tid[i];
    r.push_pop =
        n.event_type[i] == store::kNvtxPushPopRange || n.event_type[i] == store::kNvtxtPushPopRange;
    r.name = nvtx_text(t, i);
    if (int64_t domain = n.domain_id[i]; domain != 0) {
      auto it = domains.find({domain, global_id::process_of(r.global_tid)});
      r.domain = it != domains.end() ? it->second : fmt::format("domain {}", domain);
    }
    out.nvtx_ranges.push_back(std::move(r));
  }
}

}  // namespace

GpuTimeline gpu_timeline(const GpuTables& tables) {
  GpuTimeline out;
  add_api_calls(tables, out);
  add_kernels(tables, out);
  add_mem_ops(tables, tables.memcpy, GpuOpKind::kMemcpy, out);
  add_mem_ops(tables, tables.memset, GpuOpKind::kMemset, out);
  add_nvtx_ranges(tables, out);
  for (const auto& [tid, id] : tables.thread_name_ids) {
    out.thread_names[tid] = string_or_empty(tables, id);
  }
  out.process_names.insert(tables.process_names.begin(), tables.process_names.end());
  return out;
}

void add_torch_ops(GpuTimeline& timeline, const store::TorchOpRows& rows) {
  timeline.torch_ops.reserve(timeline.torch_ops.size() + rows.ops.size());
  for (const auto& op : rows.ops) {
    TimelineTorchOp t;
    t.start = op.start;
    t.end = op.end;
    t.global_tid = op.global_tid;
    t.external_id = op.external_id;
    t.seq = op.seq;
    t.unfinished = analysis::torch_op_unfinished(op.flags);
    t.name = op.name;
    t.scope = analysis::torch_scope_name(op.scope);
    if (op.shapes) t.shapes = *op.shapes;
    timeline.torch_ops.push_back(std::move(t));
  }
  for (const auto& c : rows.correlations) {
    if (c.external_kind != analysis::kTorchExternalKind) continue;  // another library's ids
    timeline.external_links.push_back({c.global_pid, c.correlation_id, c.external_id});
  }
}

}  // namespace strata::exporter
