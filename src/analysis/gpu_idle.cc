#include "analysis/gpu_idle.h"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/global_id.h"

namespace strata::analysis {
namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// One GPU activity: when it ran and the API call that issued it.
struct Activity {
  int64_t start;
  int64_t end;
  int64_t process;  // globalPid: correlation ids are per process
  int64_t correlation;
  bool first_use = false;  // the first launch of its kernel name in its process
};

// Timestamps are nanoseconds on CLOCK_MONOTONIC; a row with a negative
// start or an end before its start (a damaged or hand-made file) is left
// out, so that every difference below stays within int64.
bool valid(int64_t start, int64_t end) {
  return start >= 0 && end >= start;
}

// Roles in the order a gap's overlapping calls are charged: where calls
// nest (a driver call inside a runtime call), the stronger role wins.
constexpr std::array<ApiRole, 3> kRolePriority = {ApiRole::kSync, ApiRole::kLaunch,
                                                  ApiRole::kOther};

struct Call {
  int64_t start;
  int64_t end;
  ApiRole role;
  bool copy;  // a copy or memset call (a synchronous one is kSync)
};

// One thread's calls by start, with the running maximum of their ends: the
// calls covering a time t are among those after the first whose running
// maximum passes t, even where an earlier call encloses later ones.
struct ThreadCalls {
  std::vector<Call> calls;
  std::vector<int64_t> max_end;

  void finish() {
    std::sort(calls.begin(), calls.end(),
              [](const Call& a, const Call& b) { return a.start < b.start; });
    max_end.resize(calls.size());
    int64_t m = INT64_MIN;
    for (size_t i = 0; i < calls.size(); ++i) max_end[i] = m = std::max(m, calls[i].end);
  }
};

void add_activities(const store::MemOpColumns& ops, std::vector<Activity>& out) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!valid(ops.start[i], ops.end[i])) continue;
    const int64_t process = i < ops.global_pid.size() ? ops.global_pid[i] : 0;
    const int64_t correlation = i < ops.correlation_id.size() ? ops.correlation_id[i] : 0;
    out.push_back({ops.start[i], ops.end[i], process, correlation, false});
  }
}

void charge(ApiRole role, int64_t length, IdleCauses& idle) {
  if (role == ApiRole::kSync) {
    idle.sync_ns += length;
  } else if (role == ApiRole::kLaunch) {
    idle.launch_ns += length;
  } else {
    idle.other_api_ns += length;
  }
}

// The time in [from, to) charged by the role of the strongest call of
// `thread` covering it; what no call covers is the thread's own code.
void charge_by_activity(int64_t tid, const ThreadCalls& thread, int64_t from, int64_t to,
                        GpuIdle& out) {
  IdleCauses& idle = out.idle;
  if (from >= to) return;
  const auto& calls = thread.calls;
  const size_t first =
      static_cast<size_t>(std::upper_bound(thread.max_end.begin(), thread.max_end.end(), from) -
                          thread.max_end.begin());
  std::vector<const Call*> overlapping;
  for (size_t i = first; i < calls.size() && calls[i].start < to; ++i) {
    if (calls[i].end > from) overlapping.push_back(&calls[i]);
  }
  // Elementary segments between the clipped calls' boundaries; each goes to
  // the strongest role covering it. A gap overlaps few calls.
  std::vector<int64_t> cuts = {from, to};
  for (const Call* c : overlapping) {
    cuts.push_back(std::clamp(c->start, from, to));
    cuts.push_back(std::clamp(c->end, from, to));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const int64_t a = cuts[i], b = cuts[i + 1];
    size_t best = kRolePriority.size();
    bool sync_copy = false;
    for (const Call* c : overlapping) {
      if (c->start > a || c->end < b) continue;
      const size_t rank = static_cast<size_t>(
          std::find(kRolePriority.begin(), kRolePriority.end(), c->role) - kRolePriority.begin());
      best = std::min(best, rank);
      sync_copy = sync_copy || (c->role == ApiRole::kSync && c->copy);
    }
    if (best == kRolePriority.size()) {
      idle.host_ns += b - a;
      if (!out.host_intervals.empty() && out.host_intervals.back().global_tid == tid &&
          out.host_intervals.back().end == a) {
        out.host_intervals.back().end = b;
      } else {
        out.host_intervals.push_back({tid, a, b});
      }
    } else {
      charge(kRolePriority[best], b - a, idle);
      if (kRolePriority[best] == ApiRole::kSync && sync_copy) idle.copy_sync_ns += b - a;
    }
  }
}

}  // namespace

bool is_copy_call(std::string_view name) {
  return starts_with(name, "cudaMemcpy") || starts_with(name, "cuMemcpy") ||
         starts_with(name, "cudaMemset") || starts_with(name, "cuMemset");
}

ApiRole api_role(std::string_view name) {
  // CUPTI names carry a version suffix (cudaMemcpy_v3020); the checks below
  // look at prefixes and parts, which the suffix does not change.
  if (contains(name, "Synchronize")) return ApiRole::kSync;
  if (is_copy_call(name)) return contains(name, "Async") ? ApiRole::kLaunch : ApiRole::kSync;
  if (contains(name, "Launch")) return ApiRole::kLaunch;
  // cudaFree and cuMemFree wait for the device (cudaFreeAsync does not).
  if ((starts_with(name, "cudaFree") || starts_with(name, "cuMemFree")) &&
      !contains(name, "Async") && !contains(name, "Host") && !contains(name, "Array")) {
    return ApiRole::kSync;
  }
  return ApiRole::kOther;
}

GpuIdle gpu_idle(const store::GpuTables& tables) {
  GpuIdle out;
  const store::RuntimeColumns& api = tables.runtime;
  for (size_t i = 0; i < api.size(); ++i) {
    if (!valid(api.start[i], api.end[i])) continue;
    if (!out.has_api || api.start[i] < out.first_api_start) out.first_api_start = api.start[i];
    out.has_api = true;
  }

  std::vector<Activity> activities;
  const store::KernelColumns& k = tables.kernels;
  int64_t first_kernel = -1;
  // Per kernel name and process: its earliest launch (what precedes it is
  // that kernel's first use: lazy module loading, a library's handle and
  // workspace, autotuning; paid once, not in every iteration of a loop) and
  // its GPU time.
  struct KernelName {
    int64_t first_start = INT64_MAX;
    int64_t busy_ns = 0;
  };
  using NameKey = std::pair<int64_t, int64_t>;  // (process, name id)
  std::map<NameKey, KernelName> names;
  std::vector<NameKey> keys;  // parallel to the kernels' activities
  for (size_t i = 0; i < k.size(); ++i) {
    if (!valid(k.start[i], k.end[i])) continue;
    const int64_t process = i < k.global_pid.size() ? k.global_pid[i] : 0;
    const int64_t correlation = i < k.correlation_id.size() ? k.correlation_id[i] : 0;
    activities.push_back({k.start[i], k.end[i], process, correlation, false});
    if (first_kernel < 0 || k.start[i] < first_kernel) first_kernel = k.start[i];
    const NameKey key{process, i < k.name_id.size() ? k.name_id[i] : 0};
    keys.push_back(key);
    KernelName& n = names[key];
    n.first_start = std::min(n.first_start, k.start[i]);
    const int64_t duration = k.end[i] - k.start[i];
    n.busy_ns = std::min(n.busy_ns, INT64_MAX - duration) + duration;
  }
  for (size_t a = 0; a < keys.size(); ++a) {
    activities[a].first_use = names[keys[a]].first_start == activities[a].start;
  }
  // The kernel with most GPU time is what the program is for: what comes
  // before its first launch (a library's handle, workspace memsets, input
  // conversion) is set-up too, however many other activities it holds (the
  // planted healthy GEMM: cudaFree, then cublasCreate's 66 ms and a memset).
  int64_t main_kernel_start = INT64_MIN;
  int64_t most = -1;
  for (const auto& [key, n] : names) {
    if (n.busy_ns > most) most = n.busy_ns, main_kernel_start = n.first_start;
  }
  add_activities(tables.memcpy, activities);
  add_activities(tables.memset, activities);
  // Start-up ends at the first kernel: before it a program creates its
  // context, loads modules and libraries (cuBLAS's handle, lazy loading) and
  // uploads its inputs, none of which repeats in the loop the findings are
  // about. Without kernels the copies are the work.
  if (first_kernel >= 0) {
    std::erase_if(activities, [&](const Activity& a) {
      return a.start < first_kernel && a.end <= first_kernel;
    });
  }
  if (activities.empty()) return out;
  out.has_activity = true;
  std::sort(activities.begin(), activities.end(),
            [](const Activity& a, const Activity& b) { return a.start < b.start; });

  // Each API call by (process, correlation id), and each thread's calls.
  struct Issuer {
    int64_t tid;
    int64_t start;
    int64_t end;
  };
  std::map<std::pair<int64_t, int64_t>, Issuer> issuer;
  std::unordered_map<int64_t, ThreadCalls> threads;
  for (size_t i = 0; i < api.size(); ++i) {
    if (!valid(api.start[i], api.end[i])) continue;
    const int64_t tid = api.global_tid[i];
    if (api.correlation_id[i] != 0) {
      issuer[{global_id::process_of(tid), api.correlation_id[i]}] = {tid, api.start[i], api.end[i]};
    }
    const std::string* name = tables.string(api.name_id[i]);
    const std::string_view n = name ? std::string_view(*name) : std::string_view();
    threads[tid].calls.push_back({api.start[i], api.end[i], api_role(n), is_copy_call(n)});
  }
  for (auto& [tid, thread] : threads) thread.finish();

  out.window_start = activities.front().start;
  int64_t busy_from = activities.front().start;
  int64_t busy_until = activities.front().end;
  for (size_t i = 1; i < activities.size(); ++i) {
    const Activity& next = activities[i];
    if (next.start <= busy_until) {
      busy_until = std::max(busy_until, next.end);
      continue;
    }
    out.busy_ns += busy_until - busy_from;
    ++out.gaps;
    const int64_t gap_start = busy_until, gap_end = next.start;
    auto found = issuer.find({global_id::process_of(next.process), next.correlation});
    if (next.first_use || next.start <= main_kernel_start) {
      out.idle.first_use_ns += gap_end - gap_start;
    } else if (next.correlation == 0 || found == issuer.end()) {
      out.idle.unattributed_ns += gap_end - gap_start;
    } else {
      // Until the issuing call returned the host held the work back; after
      // that it was queued.
      const int64_t held_until = std::clamp(found->second.end, gap_start, gap_end);
      const IdleCauses before = out.idle;
      const size_t intervals_before = out.host_intervals.size();
      charge_by_activity(found->second.tid, threads[found->second.tid], gap_start, held_until, out);
      out.idle.queued_ns += gap_end - held_until;
      // The GPU ran dry while the host waited for it: had the host not
      // waited, it would have queued the next work ahead, so the rest of
      // the gap (its own code, the launch) is the wait's doing too.
      const int64_t waited =
          (out.idle.sync_ns - before.sync_ns) - (out.idle.copy_sync_ns - before.copy_sync_ns);
      if (waited > 0) {
        out.idle.after_sync_ns +=
            (out.idle.host_ns - before.host_ns) + (out.idle.launch_ns - before.launch_ns) +
            (out.idle.other_api_ns - before.other_api_ns) + (out.idle.queued_ns - before.queued_ns);
        out.idle.host_after_sync_ns += out.idle.host_ns - before.host_ns;
        for (size_t h = intervals_before; h < out.host_intervals.size(); ++h) {
          out.host_intervals[h].after_sync = true;
        }
      }
    }
    busy_from = next.start;
    busy_until = next.end;
  }
  out.busy_ns += busy_until - busy_from;
  out.window_end = busy_until;
  return out;
}

}  // namespace strata::analysis
