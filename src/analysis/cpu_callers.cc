#include "analysis/cpu_callers.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace strata::analysis {
namespace {

constexpr double kNsPerS = 1e9;

using EdgeKey = std::pair<uint32_t, uint32_t>;  // (caller, callee)

struct EdgeAcc {
  uint64_t ncalls = 0;
  uint64_t primitive = 0;
  int64_t self_ns = 0;
  int64_t cum_ns = 0;
};

void add_sampled_edges(const Profile& p, const FunctionIndex& index,
                       const std::vector<int32_t>& tids, std::map<EdgeKey, EdgeAcc>& edges) {
  auto function_of = [&](FrameId frame, uint32_t& out) {
    if (frame >= index.of_frame.size()) return false;
    out = index.of_frame[frame];
    return true;
  };
  std::set<EdgeKey> in_this_sample;
  for (const Sample& s : p.samples) {
    if (!thread_wanted(tids, s.tid)) continue;
    const int64_t w = sample_weight_ns(p, s);
    in_this_sample.clear();
    for (size_t i = 0; i + 1 < s.stack.size(); ++i) {
      uint32_t callee = 0;
      uint32_t caller = 0;
      if (!function_of(s.stack[i], callee) || !function_of(s.stack[i + 1], caller)) continue;
      EdgeAcc& e = edges[{caller, callee}];
      if (i == 0) {
        ++e.ncalls;
        ++e.primitive;
        e.self_ns += w;
      }
      if (in_this_sample.insert({caller, callee}).second) e.cum_ns += w;
    }
  }
}

void add_instrumented_edges(const Profile& p, const FunctionIndex& index,
                            const std::vector<int32_t>& tids, std::map<EdgeKey, EdgeAcc>& edges) {
  for (const ThreadCalls& tc : p.calls) {
    if (!thread_wanted(tids, tc.tid)) continue;
    for_each_returned_call(balance_events(tc.events), index, [&](const ReturnedCall& call) {
      if (!call.has_caller) return;  // called from outside the profile: no caller to name
      EdgeAcc& a = edges[{call.caller, call.function}];
      ++a.ncalls;
      a.self_ns += call.self_ns;
      if (call.primitive) {
        ++a.primitive;
        a.cum_ns += call.duration_ns;
      }
    });
  }
}

}  // namespace

std::vector<CpuEdge> cpu_call_edges(const Profile& profile, const std::vector<int32_t>& tids) {
  FunctionIndex index = index_functions(profile.frames);
  std::map<EdgeKey, EdgeAcc> acc;
  if (is_sampled(profile.mode)) {
    add_sampled_edges(profile, index, tids, acc);
  } else {
    add_instrumented_edges(profile, index, tids, acc);
  }
  std::vector<CpuEdge> out;
  out.reserve(acc.size());
  for (const auto& [key, a] : acc) {
    out.push_back({key.first, key.second, a.ncalls, a.primitive,
                   static_cast<double>(a.self_ns) / kNsPerS,
                   static_cast<double>(a.cum_ns) / kNsPerS});
  }
  return out;
}

}  // namespace strata::analysis
