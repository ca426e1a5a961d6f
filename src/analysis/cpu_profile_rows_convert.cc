#include "analysis/cpu_profile_rows_convert.h"

#include <map>

namespace strata::analysis {

store::CpuProfileRows to_rows(const Profile& profile) {
  store::CpuProfileRows rows;
  rows.source = profile.mode == ProfileMode::kInProcess      ? "sigprof"
                : profile.mode == ProfileMode::kInstrumented ? "instrumented"
                                                             : "perf_event";
  rows.rate_hz = profile.rate_hz;
  rows.wall_ns = profile.wall_ns;
  rows.cpu_ns = profile.cpu_ns;
  rows.minor_faults = profile.minor_faults;
  rows.lost_samples = profile.lost_samples;
  rows.throttles = profile.throttles;
  rows.instrument_overhead_ns_per_call = profile.instrument_overhead_ns_per_call;
  for (const auto& f : profile.frames.frames()) {
    bool python = f.module.find("perf-") != std::string::npos;
    rows.frames.push_back({f.function, f.file, f.line, f.module, f.module_offset, f.inlined,
                           python ? "python" : "native", f.python_name, f.sample_line});
  }
  std::map<std::vector<FrameId>, int64_t> stack_ids;
  for (const auto& s : profile.samples) {
    store::CpuSampleRow row{s.time_ns, s.pid, s.tid, sample_weight_ns(profile, s), -1, s.cut};
    if (!s.stack.empty()) {
      auto [it, added] = stack_ids.emplace(s.stack, static_cast<int64_t>(rows.stacks.size()));
      if (added) rows.stacks.emplace_back(s.stack.begin(), s.stack.end());
      row.stack = it->second;
    }
    rows.samples.push_back(row);
  }
  for (const auto& thread : profile.calls) {
    for (const auto& e : thread.events) {
      rows.calls.push_back({thread.pid, thread.tid, e.time_ns, static_cast<int64_t>(e.frame),
                            e.kind == CallKind::kExit});
    }
  }
  for (const auto& t : profile.threads) rows.threads.push_back({t.pid, t.tid, t.name});
  for (const auto& p : profile.processes) rows.processes.emplace_back(p.pid, p.command);
  return rows;
}

Profile from_rows(const store::CpuProfileRows& rows) {
  Profile profile;
  profile.mode = rows.source == "sigprof"        ? ProfileMode::kInProcess
                 : rows.source == "instrumented" ? ProfileMode::kInstrumented
                                                 : ProfileMode::kPerfEvent;
  profile.rate_hz = rows.rate_hz;
  profile.wall_ns = rows.wall_ns;
  profile.cpu_ns = rows.cpu_ns;
  profile.minor_faults = rows.minor_faults;
  profile.lost_samples = rows.lost_samples;
  profile.throttles = rows.throttles;
  profile.instrument_overhead_ns_per_call = rows.instrument_overhead_ns_per_call;
  std::vector<FrameId> ids;
  for (const auto& f : rows.frames) {
    ids.push_back(profile.frames.intern({f.function, f.file, f.line, f.module, f.module_offset,
                                         f.inlined, f.python_name, f.sample_line}));
  }
  for (const auto& s : rows.samples) {
    Sample sample;
    sample.tid = s.tid;
    sample.pid = s.pid;
    sample.time_ns = s.time_ns;
    sample.weight_ns = s.weight_ns;
    sample.cut = s.cut;
    if (s.stack >= 0) {
      for (int64_t frame : rows.stacks[s.stack]) sample.stack.push_back(ids[frame]);
    }
    profile.samples.push_back(std::move(sample));
  }
  std::map<std::pair<int32_t, int32_t>, size_t> thread_index;  // (pid, tid) -> profile.calls
  for (const auto& c : rows.calls) {
    auto [it, added] = thread_index.emplace(std::make_pair(c.pid, c.tid), profile.calls.size());
    if (added) profile.calls.push_back({c.tid, c.pid, {}});
    profile.calls[it->second].events.push_back(
        {c.time_ns, ids[c.frame], c.exit ? CallKind::kExit : CallKind::kEnter});
  }
  for (const auto& t : rows.threads) profile.threads.push_back({t.tid, t.pid, t.name});
  for (const auto& [pid, command] : rows.processes) profile.processes.push_back({pid, command});
  return profile;
}

}  // namespace strata::analysis
