#include "analysis/cpu_merge.h"

#include <set>
#include <utility>

namespace strata::analysis {

Result<Profile> merge_profiles(std::vector<Profile> profiles) {
  if (profiles.empty()) return make_error("no CPU profiles to merge");
  Profile out;
  out.mode = profiles.front().mode;
  out.rate_hz = profiles.front().rate_hz;
  std::set<std::pair<int32_t, int32_t>> threads_seen;  // (pid, tid)
  std::set<int32_t> processes_seen;
  for (Profile& p : profiles) {
    if (is_sampled(p.mode) != is_sampled(out.mode)) {
      return make_error("cannot merge a sampled CPU profile with an instrumented one");
    }
    if (p.mode != out.mode)
      out.mode = ProfileMode::kPerfEvent;  // perf_event and in-process samples
    // Old frame id -> merged frame id.
    std::vector<FrameId> remap(p.frames.size());
    for (FrameId id = 0; id < p.frames.size(); ++id) remap[id] = out.frames.intern(p.frames.at(id));
    auto valid = [&](FrameId id) { return id < remap.size(); };
    for (Sample& s : p.samples) {
      s.weight_ns = sample_weight_ns(p, s);  // its own period, whatever the merged rate
      std::erase_if(s.stack, [&](FrameId id) { return !valid(id); });
      for (FrameId& id : s.stack) id = remap[id];
      out.samples.push_back(std::move(s));
    }
    for (ThreadCalls& tc : p.calls) {
      std::erase_if(tc.events, [&](const CallEvent& e) { return !valid(e.frame); });
      for (CallEvent& e : tc.events) e.frame = remap[e.frame];
      out.calls.push_back(std::move(tc));
    }
    for (ThreadInfo& t : p.threads) {
      if (threads_seen.insert({t.pid, t.tid}).second) out.threads.push_back(std::move(t));
    }
    for (ProcessInfo& proc : p.processes) {
      if (processes_seen.insert(proc.pid).second) out.processes.push_back(std::move(proc));
    }
    out.wall_ns += p.wall_ns;
    out.cpu_ns += p.cpu_ns;
    out.lost_samples += p.lost_samples;
    out.throttles += p.throttles;
  }
  return out;
}

}  // namespace strata::analysis
