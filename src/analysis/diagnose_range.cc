#include "analysis/diagnose_range.h"

#include <algorithm>
#include <vector>

namespace strata::analysis {
namespace {

// Keeps the rows `keep` says of one column; a column not loaded (empty, or
// of another length) stays as it is.
template <class T>
void keep_rows(std::vector<T>& column, const std::vector<bool>& keep) {
  if (column.size() != keep.size()) return;
  std::vector<T> kept;
  kept.reserve(column.size());
  for (size_t i = 0; i < column.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(column[i]));
  }
  column = std::move(kept);
}

std::vector<bool> starts_inside(const std::vector<int64_t>& start, const TimeSpan& span) {
  std::vector<bool> keep(start.size());
  for (size_t i = 0; i < start.size(); ++i) {
    keep[i] = start[i] >= span.start && start[i] <= span.end;
  }
  return keep;
}

void widen(TimeSpan& span, int64_t start, int64_t end) {
  if (span.instances == 0) {
    span.start = start;
    span.end = end;
  } else {
    span.start = std::min(span.start, start);
    span.end = std::max(span.end, end);
  }
  ++span.instances;
}

}  // namespace

std::optional<TimeSpan> find_range(const std::string& name, const store::GpuTables& gpu,
                                   std::span<const store::TorchOp> ops) {
  TimeSpan span;
  const store::NvtxColumns& nvtx = gpu.nvtx;
  for (size_t i = 0; i < nvtx.size(); ++i) {
    const int32_t type = nvtx.event_type[i];
    if (type == store::kNvtxDomainCreate) continue;
    if (nvtx.end[i] == store::NvtxColumns::kNoEnd || nvtx.end[i] < nvtx.start[i]) continue;
    const std::string* text = nullptr;
    if (i < nvtx.text_index.size() && nvtx.text_index[i] >= 0 &&
        static_cast<size_t>(nvtx.text_index[i]) < nvtx.texts.size()) {
      text = &nvtx.texts[static_cast<size_t>(nvtx.text_index[i])];
    } else if (i < nvtx.text_id.size()) {
      text = gpu.string(nvtx.text_id[i]);
    }
    if (text != nullptr && *text == name) widen(span, nvtx.start[i], nvtx.end[i]);
  }
  for (const auto& op : ops) {
    if (op.name == name && op.end >= op.start) widen(span, op.start, op.end);
  }
  if (span.instances == 0) return std::nullopt;
  return span;
}

store::GpuTables restrict_to(const store::GpuTables& tables, const TimeSpan& span) {
  store::GpuTables out = tables;
  {
    auto keep = starts_inside(out.runtime.start, span);
    auto& r = out.runtime;
    for (auto* column : {&r.start, &r.end, &r.global_tid, &r.correlation_id, &r.name_id,
                         &r.event_class}) {
      keep_rows(*column, keep);
    }
  }
  {
    auto keep = starts_inside(out.kernels.start, span);
    auto& k = out.kernels;
    for (auto* column : {&k.start, &k.end, &k.name_id, &k.device_id, &k.correlation_id,
                         &k.global_pid, &k.launch.stream_id, &k.launch.registers_per_thread,
                         &k.launch.static_shared_memory, &k.launch.dynamic_shared_memory}) {
      keep_rows(*column, keep);
    }
    keep_rows(k.launch.grid, keep);
    keep_rows(k.launch.block, keep);
  }
  for (store::MemOpColumns* m : {&out.memcpy, &out.memset}) {
    auto keep = starts_inside(m->start, span);
    for (auto* column : {&m->start, &m->end, &m->bytes, &m->copy_kind, &m->global_pid,
                         &m->device_id, &m->stream_id, &m->correlation_id}) {
      keep_rows(*column, keep);
    }
  }
  return out;
}

Profile restrict_to(const Profile& profile, const TimeSpan& span) {
  Profile out = profile;
  std::erase_if(out.samples, [&](const Sample& s) {
    return s.time_ns < span.start || s.time_ns > span.end;
  });
  out.wall_ns = span.end - span.start;
  return out;
}

}  // namespace strata::analysis
