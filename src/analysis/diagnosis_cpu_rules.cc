// The CPU profile's rules (docs/diagnose.md, "Rules"): a host hotspot
// (cpu.hotspot) and time off the CPU (cpu.off_cpu), over the samples that
// start-up and the GPU layers do not already account for.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/cpp_names.h"
#include "analysis/diagnosis_rules.h"
#include "analysis/python_view.h"
#include "common/global_id.h"

namespace strata::analysis::diag {
namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Library code, as opposed to the program's own: the C library and loader,
// CUDA, the interpreter's standard library and installed packages, system
// headers (inline frames of libstdc++).
bool is_library_frame(const Frame& f) {
  if (is_cuda_frame(f)) return true;
  if (is_python_frame(f)) {
    return f.file.empty() || f.file[0] == '<' || contains(f.file, "site-packages") ||
           contains(f.file, "dist-packages") || f.file.starts_with("/usr/lib/python");
  }
  if (!f.python_name.empty()) return true;  // a builtin: {built-in method ...}
  if (is_system_library(f.module)) return true;
  return f.file.empty() || f.file.starts_with("/usr/");
}

int64_t period_ns(const Profile& p) {
  return p.rate_hz > 0 ? static_cast<int64_t>(1e9 / p.rate_hz) : 1'000'000;
}

}  // namespace

bool is_cuda_frame(const Frame& f) {
  const std::string base = basename_of(f.module);
  for (const char* prefix :
       {"libcuda", "libcudart", "libcublas", "libcupti", "libcudnn", "libnccl", "libnvrtc",
        "libnvJitLink", "libtorch_cuda", "libc10_cuda", "libstrata_agent"}) {
    if (base.starts_with(prefix)) return true;
  }
  return false;
}

std::vector<FrameId> function_frames(const Profile& profile) {
  const FunctionIndex index = index_functions(profile.frames);
  std::vector<FrameId> first(index.functions.size(), kInvalidFrame);
  std::vector<FrameId> out(profile.frames.size(), kInvalidFrame);
  for (FrameId id = 0; id < out.size(); ++id) {
    FrameId& f = first[index.of_frame[id]];
    if (f == kInvalidFrame) f = id;
    out[id] = f;
  }
  return out;
}

FrameId owner_frame(const Profile& profile, const std::vector<FrameId>& function_frame,
                    const Sample& sample) {
  auto canonical = [&](FrameId id) { return id < function_frame.size() ? function_frame[id] : id; };
  FrameId any_own = kInvalidFrame;
  for (FrameId id : sample.stack) {
    if (id >= profile.frames.size()) continue;
    const Frame& f = profile.frames.at(id);
    if (is_library_frame(f)) continue;
    if (!f.inlined) return canonical(id);
    if (any_own == kInvalidFrame) any_own = id;
  }
  if (any_own != kInvalidFrame) return canonical(any_own);
  for (FrameId id : sample.stack) {
    if (id < profile.frames.size()) return canonical(id);  // no own code: the leaf speaks
  }
  return kInvalidFrame;
}

std::string frame_label(const Frame& f) {
  std::string name = f.function.empty() ? "[unknown]" : short_cpp_name(f.function);
  if (!f.python_name.empty()) name = "{" + f.python_name + "}";
  if (f.file.empty()) return fmt::format("{} ({})", name, basename_of(f.module));
  return f.line > 0 ? fmt::format("{} ({}:{})", name, f.file, f.line)
                    : fmt::format("{} ({})", name, f.file);
}

std::optional<HostFunction> host_function_in(const RuleContext& c,
                                             const std::vector<HostInterval>& intervals) {
  if (!c.cpu || intervals.empty()) return std::nullopt;
  const Profile& p = *c.cpu;
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> by_thread;
  for (const HostInterval& h : intervals) by_thread[h.global_tid].push_back({h.start, h.end});
  for (auto& [tid, v] : by_thread) std::sort(v.begin(), v.end());
  std::map<FrameId, int64_t> per_frame;
  HostFunction out;
  for (const Sample& s : p.samples) {
    auto thread = by_thread.find(global_id::make_tid(s.pid, s.tid));
    if (thread == by_thread.end()) continue;
    const auto& v = thread->second;
    auto after = std::upper_bound(v.begin(), v.end(), std::make_pair(s.time_ns, INT64_MAX));
    if (after == v.begin() || std::prev(after)->second < s.time_ns) continue;
    const int64_t w = sample_weight_ns(p, s);
    out.sampled_ns += w;
    const FrameId owner = owner_frame(p, c.cpu_function_frame, s);
    if (owner != kInvalidFrame) per_frame[owner] += w;
  }
  if (per_frame.empty()) return std::nullopt;
  auto best = per_frame.begin();  // ties: the first frame id, deterministic
  for (auto it = per_frame.begin(); it != per_frame.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  out.label = frame_label(p.frames.at(best->first));
  out.ns = best->second;
  return out;
}

// cpu.hotspot: one function of the program's own code holds the time. Only
// samples outside start-up and outside the GPU work window count: inside it
// the CPU matters where it keeps the GPU waiting, which the timeline rules
// measure (and name the host function of).
void cpu_hotspot_rule(const RuleContext& c, std::vector<Finding>& out) {
  if (!c.cpu || c.cpu_base_ns <= 0) return;
  const Profile& p = *c.cpu;
  const bool gpu_work = c.idle && c.idle->has_activity;
  std::map<FrameId, int64_t> per_frame;
  int64_t counted = 0, in_cuda = 0;
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const Sample& s = p.samples[i];
    if (c.cpu_startup[i]) continue;
    if (gpu_work && s.time_ns >= c.idle->window_start && s.time_ns < c.idle->window_end) continue;
    const int64_t w = sample_weight_ns(p, s);
    const bool cuda = std::any_of(s.stack.begin(), s.stack.end(), [&](FrameId id) {
      return id < p.frames.size() && is_cuda_frame(p.frames.at(id));
    });
    if (cuda) {
      in_cuda += w;
      continue;
    }
    counted += w;
    const FrameId owner = owner_frame(p, c.cpu_function_frame, s);
    if (owner != kInvalidFrame) per_frame[owner] += w;
  }
  if (per_frame.empty()) return;
  auto best = per_frame.begin();
  for (auto it = per_frame.begin(); it != per_frame.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  const int64_t gain = best->second;
  if (gain < c.th.min_share * c.cpu_base_ns) return;
  const Frame& f = p.frames.at(best->first);
  Finding out_f;
  out_f.rule = "cpu.hotspot";
  out_f.layer = FindingLayer::kCpu;
  out_f.explains_run = !gpu_work || gain >= c.th.stop_share * c.cpu_base_ns;
  const std::string where =
      f.file.empty() ? basename_of(f.module) : fmt::format("{}:{}", f.file, f.line);
  const std::string name = f.function.empty() ? "[unknown]" : short_cpp_name(f.function);
  out_f.cause = fmt::format(
      "The host code {} ({}) holds {} of the time: the bottleneck is on the "
      "CPU{}.",
      name, where, percent_of(gain, c.cpu_base_ns),
      out_f.explains_run ? ", so fix the code; no GPU tool is needed" : "");
  out_f.evidence.push_back(fmt::format("function: {} at {}", name, where));
  out_f.evidence.push_back(fmt::format(
      "on-CPU samples: {} in it and the library code it calls, of {} sampled outside start-up{} "
      "({} diagnosed)",
      short_duration(gain), short_duration(counted), gpu_work ? " and the GPU work window" : "",
      short_duration(c.cpu_base_ns)));
  out_f.evidence.push_back(
      fmt::format("share of the on-CPU samples counted: {}", percent_of(gain, counted)));
  if (in_cuda > 0) {
    out_f.evidence.push_back(
        fmt::format("{} more in CUDA calls, left to the GPU rules", short_duration(in_cuda)));
  }
  out_f.gain_ns = gain;
  out_f.try_this = out_f.explains_run
                       ? "Fix this function first (a better algorithm, less copying, no work "
                         "repeated per item); stop here: GPU tools cannot make host code faster."
                       : "Make this function cheaper or move it off the critical path.";
  out_f.show_again = "--sort tottime --limit 15 (strata report FILE: the pstats table)";
  out.push_back(std::move(out_f));
}

// cpu.off_cpu: the program's main thread waits off the CPU (sleep, I/O,
// locks). The sampler records on-CPU time only, so the waits are the pauses
// between a thread's samples longer than off_cpu_gap_periods periods, each
// named by where the thread resumed; pauses that resume in CUDA (waiting for
// the GPU) and start-up's are left to those parts.
void cpu_off_cpu_rule(const RuleContext& c, std::vector<Finding>& out) {
  if (!c.cpu || c.cpu_base_ns <= 0 || c.cpu->samples.empty()) return;
  const Profile& p = *c.cpu;
  // The main thread: tid == pid of the first process; else the busiest one.
  const int32_t pid = p.processes.empty() ? p.samples.front().pid : p.processes.front().pid;
  std::map<int32_t, int64_t> per_tid;
  for (const Sample& s : p.samples) {
    if (s.pid == pid) per_tid[s.tid] += sample_weight_ns(p, s);
  }
  int32_t main_tid = pid;
  if (!per_tid.count(pid)) {
    int64_t most = -1;
    for (auto [tid, ns] : per_tid) {
      if (ns > most) most = ns, main_tid = tid;
    }
  }
  std::vector<size_t> rows;
  for (size_t i = 0; i < p.samples.size(); ++i) {
    if (p.samples[i].pid == pid && p.samples[i].tid == main_tid) rows.push_back(i);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [&](size_t a, size_t b) { return p.samples[a].time_ns < p.samples[b].time_ns; });
  const int64_t period = period_ns(p);
  const double threshold = c.th.off_cpu_gap_periods * static_cast<double>(period);
  int64_t off = 0, gpu_wait = 0, on_cpu = 0, short_pauses = 0;
  int64_t pauses = 0;
  std::map<FrameId, int64_t> per_frame;
  // Shorter pauses by where the thread resumed, judged by their regularity.
  std::map<FrameId, std::vector<int64_t>> short_by_frame;
  for (size_t k = 0; k < rows.size(); ++k) {
    const Sample& s = p.samples[rows[k]];
    on_cpu += sample_weight_ns(p, s);
    if (k == 0) continue;
    const int64_t gap = s.time_ns - p.samples[rows[k - 1]].time_ns;
    if (static_cast<double>(gap) <= threshold || c.cpu_startup[rows[k]]) continue;
    const int64_t waited = gap - period;
    const bool cuda = std::any_of(s.stack.begin(), s.stack.end(), [&](FrameId id) {
      return id < p.frames.size() && is_cuda_frame(p.frames.at(id));
    });
    if (cuda) {
      gpu_wait += waited;
      continue;
    }
    const FrameId owner = owner_frame(p, c.cpu_function_frame, s);
    if (static_cast<double>(gap) < c.th.off_cpu_min_pause_ns) {
      short_by_frame[owner].push_back(waited);
      continue;
    }
    off += waited;
    ++pauses;
    if (owner != kInvalidFrame) per_frame[owner] += waited;
  }
  for (const auto& [owner, waits] : short_by_frame) {
    double sum = 0, squares = 0;
    for (int64_t w : waits) sum += static_cast<double>(w);
    const double mean = sum / static_cast<double>(waits.size());
    for (int64_t w : waits)
      squares += (static_cast<double>(w) - mean) * (static_cast<double>(w) - mean);
    const double cv = mean > 0 ? std::sqrt(squares / static_cast<double>(waits.size())) / mean : 0;
    int64_t total = 0;
    for (int64_t w : waits) total += w;
    if (waits.size() >= 3 && cv <= c.th.off_cpu_regular_cv) {
      off += total;
      pauses += static_cast<int64_t>(waits.size());
      if (owner != kInvalidFrame) per_frame[owner] += total;
    } else {
      short_pauses += total;
    }
  }
  if (off <= 0 || off < c.th.min_share * c.cpu_base_ns) return;
  std::vector<std::pair<FrameId, int64_t>> where(per_frame.begin(), per_frame.end());
  std::stable_sort(where.begin(), where.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Finding f;
  f.rule = "cpu.off_cpu";
  f.layer = FindingLayer::kCpu;
  f.cause = where.empty()
                ? "The program waits off the CPU (sleep, I/O, a lock) for much of the run."
                : fmt::format("The program waits off the CPU (sleep, I/O, a lock), mostly in {}.",
                              frame_label(p.frames.at(where.front().first)));
  f.evidence.push_back(fmt::format(
      "the sampler records on-CPU time only; off-CPU time is read from the pauses "
      "between the main thread's samples longer than {:.0f} sampling periods of {}",
      c.th.off_cpu_gap_periods, short_duration(period)));
  f.evidence.push_back(fmt::format(
      "main thread {}: on-CPU {}, off-CPU {} in {} pauses (of {} or more, or regular where the "
      "thread resumed), of {} diagnosed (wall {}); {} more in irregular shorter pauses, which "
      "may be preemption on a busy machine",
      main_tid, short_duration(on_cpu), short_duration(off), pauses,
      short_duration(static_cast<int64_t>(c.th.off_cpu_min_pause_ns)),
      short_duration(c.cpu_base_ns), short_duration(p.wall_ns), short_duration(short_pauses)));
  for (size_t i = 0; i < where.size() && i < 3; ++i) {
    f.evidence.push_back(fmt::format("resumed in {}: {}", frame_label(p.frames.at(where[i].first)),
                                     short_duration(where[i].second)));
  }
  if (gpu_wait > 0) {
    f.evidence.push_back(
        fmt::format("{} more off-CPU in CUDA calls (waiting for the GPU), left "
                    "to the GPU rules",
                    short_duration(gpu_wait)));
  }
  f.gain_ns = off;
  f.try_this =
      "Remove the wait or overlap it: no sleep in the loop, read ahead or in the "
      "background (a thread, a DataLoader with workers), hold locks shorter.";
  f.show_again = "(strata report FILE: the CPU profile; the pauses are between its samples)";
  out.push_back(std::move(f));
}

}  // namespace strata::analysis::diag
