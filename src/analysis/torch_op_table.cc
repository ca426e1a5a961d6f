#include "analysis/torch_op_table.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "analysis/torch_op_profile.h"
#include "common/global_id.h"

namespace strata::analysis {
namespace {

constexpr int64_t kBackwardScope = 1;  // at::RecordScope::BACKWARD_FUNCTION
constexpr int64_t kUserScope = 7;      // at::RecordScope::USER_SCOPE (record_function)
constexpr int64_t kExternalCustom0 = kTorchExternalKind;

// One FunctionEvent of torch's list.
struct Event {
  std::string name;
  int64_t start = 0, end = 0;
  int64_t thread = 0;  // globalTid; device events: their process
  bool device = false;
  bool annotation = false;  // a GPU user annotation (device row of a record_function scope)
  int64_t scope = 0;
  int64_t seq = -1;
  std::string shapes = "[]";
  std::vector<std::string> stack;
  int parent = -1;
  std::vector<int> children;
  std::vector<int> kernels;  // device events launched by this op
  bool deleted = false;
  // Damaged rows (a recording cut short, a hostile file) can hold any two
  // times: an end before the start, or a difference past int64, counts 0.
  int64_t duration() const {
    int64_t d = 0;
    return __builtin_sub_overflow(end, start, &d) || d < 0 ? 0 : d;
  }
};

// Sums over damaged rows saturate instead of overflowing (durations are
// never negative, so only the top is reached).
void add_saturating(int64_t& total, int64_t value) {
  if (__builtin_add_overflow(total, value, &total)) total = value > 0 ? INT64_MAX : INT64_MIN;
}

std::vector<std::string> split_stack(const std::string& text) {
  std::vector<std::string> frames;
  size_t at = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string frame = text.substr(at, nl - at);
    if (!frame.empty() && keep_stack_entry(frame)) frames.push_back(std::move(frame));
    at = nl + 1;
  }
  return frames;
}

// _populate_cpu_children over the CPU events.
void build_tree(std::vector<Event>& events) {
  std::map<int64_t, std::vector<int>> threads;
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    if (!events[i].device) threads[events[i].thread].push_back(i);
  }
  for (auto& [tid, ids] : threads) {
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
      if (events[a].start != events[b].start) return events[a].start < events[b].start;
      return events[a].end > events[b].end;
    });
    std::vector<int> open;
    for (int id : ids) {
      Event& e = events[id];
      while (!open.empty()) {
        Event& p = events[open.back()];
        if (e.start >= p.end || e.end > p.end) {
          open.pop_back();
        } else {
          p.children.push_back(id);
          e.parent = open.back();
          break;
        }
      }
      open.push_back(id);
    }
  }
}

void remove_dup_nodes(std::vector<Event>& events) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < events.size(); ++i) {
      Event& e = events[i];
      if (e.deleted || e.parent < 0) continue;
      Event& p = events[e.parent];
      if (p.name != e.name || p.children.size() != 1) continue;
      p.children = e.children;
      p.kernels = e.kernels;  // as torch: the child's kernels replace the parent's
      for (int c : e.children) events[c].parent = e.parent;
      e.deleted = true;
      changed = true;
    }
  }
}

void set_backward_stacks(std::vector<Event>& events) {
  auto bw_parent = [&](int i) {
    while (i >= 0 && events[i].scope != kBackwardScope) i = events[i].parent;
    return i;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> forward;  // (pid, seq)
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    const Event& e = events[i];
    if (e.device || e.deleted || e.stack.empty() || bw_parent(i) >= 0) continue;
    forward.emplace(std::make_pair(global_id::process_of(e.thread), e.seq), e.stack);
  }
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    if (events[i].device || events[i].deleted) continue;
    int p = bw_parent(i);
    if (p < 0) continue;
    auto it = forward.find({global_id::process_of(events[p].thread), events[p].seq});
    events[i].stack = it == forward.end() ? std::vector<std::string>{} : it->second;
  }
}

// torch 2.x (Kineto): a record_function scope that launched device work
// also gets a device event of its name spanning that work (from its first
// activity's start to its last one's end), which the table lists as a row of
// its own and leaves out of the Self CUDA total. Kineto finds the scope by the
// CUSTOM1 id it pushes for the innermost user scope; here it is the innermost
// scope-7 op around (or being) the op that launched the activity.
void add_gpu_user_annotations(std::vector<Event>& events) {
  std::map<int, std::pair<int64_t, int64_t>> spans;  // user-scope op -> device span
  const int count = static_cast<int>(events.size());
  for (int i = 0; i < count; ++i) {
    if (events[i].device) continue;
    int scope = i;
    while (scope >= 0 && events[scope].scope != kUserScope) scope = events[scope].parent;
    if (scope < 0) continue;
    for (int k : events[i].kernels) {
      auto [it, fresh] = spans.emplace(scope, std::make_pair(events[k].start, events[k].end));
      if (!fresh) {
        it->second.first = std::min(it->second.first, events[k].start);
        it->second.second = std::max(it->second.second, events[k].end);
      }
    }
  }
  for (const auto& [scope, span] : spans) {
    Event e;
    e.name = events[scope].name;
    e.start = span.first;
    e.end = span.second;
    e.thread = global_id::process_of(events[scope].thread);
    e.device = true;
    e.annotation = true;
    events.push_back(std::move(e));
  }
}

int64_t cuda_total(const std::vector<Event>& events, int i, std::vector<int64_t>& memo) {
  if (memo[i] >= 0) return memo[i];
  int64_t total = 0;
  for (int k : events[i].kernels) add_saturating(total, events[k].duration());
  for (int c : events[i].children) add_saturating(total, cuda_total(events, c, memo));
  return memo[i] = total;
}

int64_t sort_value(const TorchOpTableRow& r, TorchSort sort) {
  switch (sort) {
    case TorchSort::kSelfCpu:
      return r.self_cpu_ns;
    case TorchSort::kCpuTotal:
      return r.cpu_total_ns;
    case TorchSort::kSelfCuda:
      return r.self_cuda_ns;
    case TorchSort::kCudaTotal:
      return r.cuda_total_ns;
    case TorchSort::kCount:
      return r.calls;
    case TorchSort::kDefault:
      break;
  }
  return 0;
}

}  // namespace

bool keep_stack_entry(const std::string& frame) {
  static const std::pair<const char*, const char*> kFiltered[] = {
      {"autograd/__init__", "_make_grads"},
      {"autograd/__init__", "backward"},
      {"torch/tensor", "backward"},
      {"_internal/common_utils", "prof_callable"},
      {"_internal/common_utils", "prof_func_call"},
      {"_internal/common_utils", "prof_meth_call"},
  };
  for (const auto& [file, function] : kFiltered) {
    if (frame.find(file) != std::string::npos && frame.find(function) != std::string::npos) {
      return false;
    }
  }
  return true;
}

Result<TorchSort> parse_torch_sort(const std::string& name) {
  static const std::pair<const char*, TorchSort> kNames[] = {
      {"self_cpu_time_total", TorchSort::kSelfCpu},
      {"cpu_time_total", TorchSort::kCpuTotal},
      {"self_cuda_time_total", TorchSort::kSelfCuda},
      {"self_device_time_total", TorchSort::kSelfCuda},
      {"cuda_time_total", TorchSort::kCudaTotal},
      {"device_time_total", TorchSort::kCudaTotal},
      {"count", TorchSort::kCount},
      // Aliases: the NVTX op table's and the CPU reports' names.
      {"self_cpu", TorchSort::kSelfCpu},
      {"cpu_total", TorchSort::kCpuTotal},
      {"self_gpu", TorchSort::kSelfCuda},
      {"gpu_total", TorchSort::kCudaTotal},
      {"calls", TorchSort::kCount},
      {"ncalls", TorchSort::kCount},
      {"tottime", TorchSort::kDefault},
  };
  for (const auto& [n, sort] : kNames) {
    if (name == n) return sort;
  }
  return make_error("unknown --sort '" + name +
                    "' for the PyTorch op table (known: self_cpu_time_total, cpu_time_total, "
                    "self_cuda_time_total, cuda_time_total, count)");
}

Result<TorchOpTable> torch_op_table(const store::TorchOpRows& rows,
                                    const TorchOpTableOptions& options) {
  std::vector<Event> events;
  events.reserve(rows.ops.size() + rows.runtime.size() + rows.device.size());
  bool have_shapes = false, have_stacks = false;
  // (pid, external id) -> op event.
  std::unordered_map<int64_t, std::unordered_map<int64_t, int>> op_by_external;
  for (const auto& op : rows.ops) {
    Event e;
    e.name = op.name;
    e.start = op.start;
    e.end = op.end;
    e.thread = op.global_tid;
    e.scope = op.scope;
    e.seq = op.seq;
    if (op.shapes) {
      have_shapes = true;
      e.shapes = *op.shapes;
    }
    if (op.stack) {
      have_stacks = true;
      e.stack = split_stack(*op.stack);
    }
    if (op.external_id != 0) {
      op_by_external[global_id::process_of(op.global_tid)][op.external_id] =
          static_cast<int>(events.size());
    }
    events.push_back(std::move(e));
  }
  if (options.group_by_shape && !have_shapes) {
    return make_error(
        "--group-by-shape needs input shapes: the trace was recorded without --record-shapes");
  }
  if (options.group_by_stack > 0 && !have_stacks) {
    return make_error(
        "--group-by-stack needs Python stacks: the trace was recorded without --with-stack");
  }
  for (const auto& call : rows.runtime) {
    Event e;
    e.name = call.name;
    e.start = call.start;
    e.end = call.end;
    e.thread = call.global_tid;
    events.push_back(std::move(e));
  }
  // (pid, correlationId) -> external id, CUSTOM0 only (what libstrata_torch pushes).
  std::map<std::pair<int64_t, int64_t>, int64_t> external;
  for (const auto& c : rows.correlations) {
    if (c.external_kind == kExternalCustom0) {
      external[{global_id::process_of(c.global_pid), c.correlation_id}] = c.external_id;
    }
  }
  TorchOpTable table;
  for (const auto& d : rows.device) {
    Event e;
    e.name = d.name;
    e.start = d.start;
    e.end = d.end;
    e.thread = d.global_pid;
    e.device = true;
    const int id = static_cast<int>(events.size());
    events.push_back(std::move(e));
    const int64_t pid = global_id::process_of(d.global_pid);
    auto ext = external.find({pid, d.correlation_id});
    int owner = -1;
    if (ext != external.end()) {
      auto proc = op_by_external.find(pid);
      if (proc != op_by_external.end()) {
        auto op = proc->second.find(ext->second);
        if (op != proc->second.end()) owner = op->second;
      }
    }
    if (owner >= 0) {
      events[owner].kernels.push_back(id);
    } else {
      ++table.unlinked_device;
    }
  }

  build_tree(events);
  add_gpu_user_annotations(events);
  remove_dup_nodes(events);
  set_backward_stacks(events);

  // key_averages, keys in order of first appearance by (start, -end) as
  // torch's function_events are sorted.
  std::vector<int> order(events.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (events[a].start != events[b].start) return events[a].start < events[b].start;
    return events[a].end > events[b].end;
  });
  std::vector<int64_t> memo(events.size(), -1);
  std::map<std::tuple<std::string, bool, bool, std::string, std::vector<std::string>>, size_t> keys;
  table.shapes_column = options.group_by_shape;
  table.stack_column = options.group_by_stack > 0;
  for (int i : order) {
    const Event& e = events[i];
    if (e.deleted) continue;
    std::vector<std::string> stack;
    if (options.group_by_stack > 0) {
      size_t n = std::min(e.stack.size(), static_cast<size_t>(options.group_by_stack));
      stack.assign(e.stack.begin(), e.stack.begin() + static_cast<std::ptrdiff_t>(n));
    }
    std::string shapes = options.group_by_shape ? e.shapes : std::string();
    auto key = std::make_tuple(e.name, e.device, e.annotation, shapes, stack);
    auto [it, fresh] = keys.emplace(key, table.rows.size());
    if (fresh) {
      TorchOpTableRow row;
      row.name = e.name;
      row.device = e.device;
      row.annotation = e.annotation;
      row.shapes = options.group_by_shape ? e.shapes : std::string();
      row.stack = std::move(stack);
      table.rows.push_back(std::move(row));
    }
    TorchOpTableRow& row = table.rows[it->second];
    ++row.calls;
    if (e.device) {
      add_saturating(row.self_cuda_ns, e.duration());
      add_saturating(row.cuda_total_ns, e.duration());
      // torch's sum_self_device_time_total leaves user annotations out.
      if (!e.annotation) add_saturating(table.self_cuda_total_ns, e.duration());
      continue;
    }
    int64_t self_cpu = e.duration();
    int64_t children_cuda = 0;
    for (int c : e.children) {
      add_saturating(self_cpu, -events[c].duration());
      add_saturating(children_cuda, cuda_total(events, c, memo));
    }
    const int64_t total_cuda = cuda_total(events, i, memo);
    add_saturating(row.cpu_total_ns, e.duration());
    add_saturating(row.self_cpu_ns, self_cpu);
    add_saturating(row.cuda_total_ns, total_cuda);
    add_saturating(row.self_cuda_ns, total_cuda - children_cuda);  // both >= 0: no overflow
    add_saturating(table.self_cpu_total_ns, self_cpu);
  }

  TorchSort sort = options.sort;
  if (sort == TorchSort::kDefault) {
    sort = table.self_cuda_total_ns > 0 ? TorchSort::kSelfCuda : TorchSort::kSelfCpu;
  }
  std::stable_sort(table.rows.begin(), table.rows.end(),
                   [&](const TorchOpTableRow& a, const TorchOpTableRow& b) {
                     return sort_value(a, sort) > sort_value(b, sort);
                   });
  if (options.limit > 0 && table.rows.size() > options.limit) table.rows.resize(options.limit);
  return table;
}

}  // namespace strata::analysis
