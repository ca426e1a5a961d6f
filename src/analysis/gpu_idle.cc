#include "analysis/gpu_idle.h"

#include <algorithm>
#include <array>
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
};

// Roles in the order a gap's overlapping calls are charged: where calls
// nest (a driver call inside a runtime call), the stronger role wins.
constexpr std::array<ApiRole, 3> kRolePriority = {ApiRole::kSync, ApiRole::kLaunch,
                                                  ApiRole::kOther};

struct Call {
  int64_t start;
  int64_t end;
  ApiRole role;
};

// Timestamps are nanoseconds on CLOCK_MONOTONIC; a row with a negative
// start or an end before its start (a damaged or hand-made file) is left
// out, so that every difference below stays within int64.
bool valid(int64_t start, int64_t end) {
  return start >= 0 && end >= start;
}

void add_activities(const store::MemOpColumns& ops, std::vector<Activity>& out) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!valid(ops.start[i], ops.end[i])) continue;
    const int64_t process = i < ops.global_pid.size() ? ops.global_pid[i] : 0;
    const int64_t correlation = i < ops.correlation_id.size() ? ops.correlation_id[i] : 0;
    out.push_back({ops.start[i], ops.end[i], process, correlation});
  }
}

// The time in [from, to) covered by `calls` (sorted by start), charged by
// role; what no call covers is the thread's own code.
void charge_gap(const std::vector<Call>& calls, int64_t from, int64_t to, IdleCauses& idle) {
  // Elementary segments between the clipped calls' boundaries; each goes to
  // the strongest role covering it. A gap overlaps few calls.
  std::vector<const Call*> overlapping;
  auto first = std::upper_bound(calls.begin(), calls.end(), from,
                                [](int64_t t, const Call& c) { return t < c.start; });
  // Calls that began before the gap may still cover it: step back over them.
  auto it = first;
  while (it != calls.begin() && std::prev(it)->end > from) --it;
  for (; it != calls.end() && it->start < to; ++it) {
    if (it->end > from) overlapping.push_back(&*it);
  }
  std::vector<int64_t> cuts = {from, to};
  for (const Call* c : overlapping) {
    cuts.push_back(std::clamp(c->start, from, to));
    cuts.push_back(std::clamp(c->end, from, to));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const int64_t a = cuts[i], b = cuts[i + 1];
    int best = -1;
    for (const Call* c : overlapping) {
      if (c->start > a || c->end < b) continue;
      const int rank = static_cast<int>(
          std::find(kRolePriority.begin(), kRolePriority.end(), c->role) - kRolePriority.begin());
      if (best < 0 || rank < best) best = rank;
    }
    const int64_t length = b - a;
    if (best < 0) {
      idle.host_ns += length;
    } else if (kRolePriority[best] == ApiRole::kSync) {
      idle.sync_ns += length;
    } else if (kRolePriority[best] == ApiRole::kLaunch) {
      idle.launch_ns += length;
    } else {
      idle.other_api_ns += length;
    }
  }
}

}  // namespace

ApiRole api_role(std::string_view name) {
  // CUPTI names carry a version suffix (cudaMemcpy_v3020); the checks below
  // look at prefixes and parts, which the suffix does not change.
  if (contains(name, "Synchronize")) return ApiRole::kSync;
  const bool copy_or_set = starts_with(name, "cudaMemcpy") || starts_with(name, "cuMemcpy") ||
                           starts_with(name, "cudaMemset") || starts_with(name, "cuMemset");
  if (copy_or_set) return contains(name, "Async") ? ApiRole::kLaunch : ApiRole::kSync;
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
  bool any_api = false;
  for (size_t i = 0; i < api.size(); ++i) {
    if (!valid(api.start[i], api.end[i])) continue;
    if (!any_api || api.start[i] < out.first_api_start) out.first_api_start = api.start[i];
    any_api = true;
  }

  std::vector<Activity> activities;
  const store::KernelColumns& k = tables.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    if (!valid(k.start[i], k.end[i])) continue;
    const int64_t process = i < k.global_pid.size() ? k.global_pid[i] : 0;
    const int64_t correlation = i < k.correlation_id.size() ? k.correlation_id[i] : 0;
    activities.push_back({k.start[i], k.end[i], process, correlation});
  }
  add_activities(tables.memcpy, activities);
  add_activities(tables.memset, activities);
  // Start-up ends at the first kernel: before it a program creates its
  // context, loads modules and libraries (cuBLAS's handle, lazy loading) and
  // uploads its inputs, none of which repeats in the loop the findings are
  // about. Without kernels the copies are the work.
  int64_t first_kernel = -1;
  for (size_t i = 0; i < k.size(); ++i) {
    if (valid(k.start[i], k.end[i]) && (first_kernel < 0 || k.start[i] < first_kernel)) {
      first_kernel = k.start[i];
    }
  }
  if (first_kernel >= 0) {
    std::erase_if(activities, [&](const Activity& a) { return a.end <= first_kernel; });
  }
  if (activities.empty()) return out;
  out.has_activity = true;
  std::sort(activities.begin(), activities.end(),
            [](const Activity& a, const Activity& b) { return a.start < b.start; });

  // Each API call by (process, correlation id), and each thread's calls in order.
  std::map<std::pair<int64_t, int64_t>, int64_t> issuer;  // -> globalTid
  std::unordered_map<int64_t, std::vector<Call>> calls_of;
  for (size_t i = 0; i < api.size(); ++i) {
    if (!valid(api.start[i], api.end[i])) continue;
    const int64_t tid = api.global_tid[i];
    if (api.correlation_id[i] != 0) {
      issuer[{global_id::process_of(tid), api.correlation_id[i]}] = tid;
    }
    const std::string* name = tables.string(api.name_id[i]);
    calls_of[tid].push_back({api.start[i], api.end[i], api_role(name ? *name : "")});
  }
  for (auto& [tid, calls] : calls_of) {
    std::sort(calls.begin(), calls.end(),
              [](const Call& a, const Call& b) { return a.start < b.start; });
  }

  out.window_start = activities.front().start;
  int64_t busy_until = activities.front().end;
  int64_t busy_from = activities.front().start;
  for (size_t i = 1; i < activities.size(); ++i) {
    const Activity& next = activities[i];
    if (next.start <= busy_until) {
      busy_until = std::max(busy_until, next.end);
      continue;
    }
    out.busy_ns += busy_until - busy_from;
    ++out.gaps;
    auto found = issuer.find({global_id::process_of(next.process), next.correlation});
    if (next.correlation == 0 || found == issuer.end()) {
      out.idle.unattributed_ns += next.start - busy_until;
    } else {
      charge_gap(calls_of[found->second], busy_until, next.start, out.idle);
    }
    busy_from = next.start;
    busy_until = next.end;
  }
  out.busy_ns += busy_until - busy_from;
  out.window_end = busy_until;
  return out;
}

}  // namespace strata::analysis
