#include "analysis/diagnose_verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/cpp_names.h"
#include "analysis/idle_frames.h"
#include "analysis/python_imports.h"
#include "analysis/python_view.h"

namespace strata::analysis {
namespace {

double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

// What a finding's share is of: a CPU rule's, the run less start-up (or the
// range); the others', the GPU's work window.
int64_t share_base(const Diagnosis& d, const Finding& f) {
  return f.layer == FindingLayer::kCpu ? d.cpu_base_ns : d.idle.window_ns();
}

// The layer the verdict names for a finding's layer ("kernels", as the
// layer log names that layer, for a kernel finding).
const char* explaining_layer(FindingLayer layer) {
  return layer == FindingLayer::kKernel ? "kernels" : finding_layer_name(layer);
}

// The verdict of a program with GPU activity: its largest finding, of any
// layer, or why there is none.
void judge_gpu(const Diagnosis& d, DiagnoseVerdict& v) {
  const int64_t window = d.idle.window_ns();
  if (!d.findings.empty()) {
    const Finding& top = d.findings.front();
    const int64_t base = share_base(d, top);
    v.explained_by = explaining_layer(top.layer);
    v.verdict = fmt::format(
        "{} could save up to {} ({:.0f} % of the {} {}): {}", top.rule, short_duration(top.gain_ns),
        percent(static_cast<double>(top.gain_ns), static_cast<double>(base)), short_duration(base),
        top.layer == FindingLayer::kCpu ? "run after start-up" : "work window", top.cause);
    return;
  }
  const double busy = percent(static_cast<double>(d.idle.busy_ns), static_cast<double>(window));
  if (busy >= 100.0 * (1.0 - d.thresholds.min_share)) {
    v.explained_by = "kernels";
    v.verdict = fmt::format(
        "no bottleneck in the GPU timeline: the GPU is busy {:.1f} % of the {} work window, so "
        "the time is in the kernels themselves (their metrics are the next layer)",
        busy, short_duration(window));
    return;
  }
  v.verdict = fmt::format(
      "no single cause accounts for {:.0f} % of the {} work window (GPU busy {:.1f} %); the idle "
      "breakdown above says where the rest went",
      100 * d.thresholds.min_share, short_duration(window), busy);
}

// The verdict of a program with no GPU activity: on the CPU, or waiting.
void judge_host(DiagnoseVerdict& v) {
  double on_cpu = v.baseline.on_cpu;
  if (on_cpu <= 0) return;  // no successful run: nothing to judge
  const double off_cpu = std::max(0.0, 1.0 - on_cpu);
  std::string hottest;
  if (v.cpu && !v.cpu->hottest.empty()) {
    const SelfShare& h = v.cpu->hottest.front();
    hottest = fmt::format("{} ({:.1f} % of samples{}, self)", h.label, 100 * h.share,
                          v.cpu->hottest_after_startup ? " after start-up" : "");
  }
  if (off_cpu >= v.thresholds.min_share && off_cpu > std::min(on_cpu, 1.0)) {
    // Wall and CPU time cannot tell a wait the program chose from one for a
    // CPU on an oversubscribed machine: both are named.
    v.explained_by = "off-cpu";
    v.verdict = fmt::format(
        "the program is off the CPU {:.0f} % of its wall time (sleep, I/O, locks, a child "
        "process, or waiting for a CPU on a busy machine): no profile of its code explains "
        "that time{}",
        100 * off_cpu, hottest.empty() ? "" : "; on the CPU, its hottest function is " + hottest);
    return;
  }
  v.explained_by = "cpu";
  if (!v.findings.empty() && v.findings.front().rule == "cpu.kernel_time") {
    // The samples' hottest function is where the faults land, not their cause.
    const Finding& top = v.findings.front();
    v.verdict = fmt::format(
        "the time is on the CPU ({:.0f} % of wall time), much of it in the kernel: {} could "
        "save up to {}: {}",
        100 * std::min(on_cpu, 1.0), top.rule, short_duration(top.gain_ns), top.cause);
    return;
  }
  v.verdict = fmt::format(
      "the time is on the CPU ({:.0f} % of wall time){}: fix the host code; no GPU layer "
      "has work to look at",
      100 * std::min(on_cpu, 1.0), hottest.empty() ? "" : "; hottest function " + hottest);
}

// The baseline's medians cpu.kernel_time reads; nullopt when a run recorded
// no page faults or peak RSS (a trace from before strata stored them).
std::optional<KernelTimeFacts> kernel_time_facts(const BaselineFacts& b) {
  if (!b.wall_ns || !b.cpu_ns || !b.sys_ns || !b.minor_faults || !b.peak_rss_kb) {
    return std::nullopt;
  }
  KernelTimeFacts k;
  k.runs = b.succeeded;
  k.wall_ns = static_cast<int64_t>(b.wall_ns->median);
  k.cpu_ns = static_cast<int64_t>(b.cpu_ns->median);
  k.sys_ns = static_cast<int64_t>(b.sys_ns->median);
  k.minor_faults = static_cast<int64_t>(b.minor_faults->median);
  k.peak_rss_kb = static_cast<int64_t>(b.peak_rss_kb->median);
  return k;
}

}  // namespace

BaselineFacts baseline_facts(std::span<const store::BenchRun> runs) {
  BaselineFacts f;
  std::vector<double> wall, cpu, sys, faults, rss;
  for (const auto& r : runs) {
    if (r.warmup) continue;
    ++f.runs;
    if (r.signal || r.exit_status.value_or(1) != 0) continue;
    ++f.succeeded;
    wall.push_back(static_cast<double>(r.wall_ns));
    cpu.push_back(static_cast<double>(r.user_ns + r.sys_ns));
    sys.push_back(static_cast<double>(r.sys_ns));
    if (r.minor_faults) faults.push_back(static_cast<double>(*r.minor_faults));
    if (r.max_rss_kb > 0) rss.push_back(static_cast<double>(r.max_rss_kb));
  }
  f.wall_ns = summarize(wall);
  f.cpu_ns = summarize(cpu);
  f.sys_ns = summarize(sys);
  f.minor_faults = summarize(faults);
  f.peak_rss_kb = summarize(rss);
  if (f.wall_ns && f.wall_ns->mean > 0) f.wall_cv = f.wall_ns->stddev / f.wall_ns->mean;
  if (f.wall_ns && f.cpu_ns && f.wall_ns->median > 0) {
    f.on_cpu = f.cpu_ns->median / f.wall_ns->median;
  }
  return f;
}

std::optional<RecordedRunFacts> recorded_run_facts(const Profile& recorded,
                                                   const BaselineFacts& baseline) {
  if (recorded.wall_ns <= 0) return std::nullopt;
  RecordedRunFacts f;
  f.wall_ns = recorded.wall_ns;
  f.cpu_ns = recorded.cpu_ns;
  f.minor_faults = recorded.minor_faults;
  if (baseline.wall_ns && baseline.wall_ns->median > 0) {
    f.wall_ratio = static_cast<double>(f.wall_ns) / baseline.wall_ns->median;
  }
  if (baseline.cpu_ns && baseline.cpu_ns->median > 0 && f.cpu_ns > 0) {
    f.cpu_ratio = static_cast<double>(f.cpu_ns) / baseline.cpu_ns->median;
  }
  return f;
}

CpuFacts cpu_facts(const Profile& native) {
  CpuFacts f;
  f.samples = native.samples.size();
  // A Python program is judged by its Python functions, as cProfile names them.
  // Idle-spinning pool threads are not the program's work (idle_frames.h).
  const Profile working = without_idle(native);
  std::optional<Profile> python = python_view(working);
  const Profile& profile = python ? *python : working;
  // Names as the CPU table prints them (std::string, not its expansion). A
  // Python program's hottest functions are its work's: start-up (imports,
  // the interpreter's own) is reported apart, as the rules leave it out, or
  // `import torch`'s extension loading would be the "function to fix".
  Profile work = with_short_names(profile);
  if (python) {
    std::erase_if(work.samples, [&](const Sample& s) {
      return python_startup_part(work, s) != PythonStartup::kNone;
    });
    f.hottest_after_startup = true;
  }
  f.hottest = top_self_shares(work, 3);
  if (python) {
    ImportTable imports = python_imports(*python);
    f.import_ns = imports.import_ns;
    f.import_cut_ns = imports.cut_ns;
    for (const auto& row : imports.rows) {
      if (row.depth != 0) continue;
      f.heaviest_imports.emplace_back(row.module, row.cumulative_ns);
    }
    std::stable_sort(f.heaviest_imports.begin(), f.heaviest_imports.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (f.heaviest_imports.size() > 3) f.heaviest_imports.resize(3);
  }
  return f;
}

Result<DiagnoseVerdict> build_verdict(const VerdictInput& in) {
  DiagnoseVerdict v;
  v.thresholds = in.thresholds;
  v.layers = in.layers;
  v.budget_s = in.budget_s;
  v.range = in.range;
  v.baseline = baseline_facts(in.bench);
  // The whole run's, before any --range.
  if (in.cpu) v.recorded = recorded_run_facts(*in.cpu, v.baseline);
  std::optional<store::GpuTables> gpu = in.gpu;
  std::optional<Profile> cpu = in.cpu;
  if (in.range) {
    static const store::GpuTables kNoTables;
    static const std::vector<store::TorchOp> kNoOps;
    auto span = find_range(*in.range, gpu ? *gpu : kNoTables, in.ops ? in.ops->ops : kNoOps);
    if (!span) {
      return make_error("--range '" + *in.range +
                        "': the trace has no NVTX range or PyTorch record_function named so");
    }
    v.range_span = *span;
    if (gpu) gpu = restrict_to(*gpu, *span);
    if (cpu) cpu = restrict_to(*cpu, *span);
  }
  if (cpu && !cpu->samples.empty()) v.cpu = cpu_facts(*cpu);
  // Every layer's rules over what the trace holds (analysis/diagnosis.h):
  // the CPU profile, the GPU timeline, the op table, the kernel metrics.
  DiagnosisInputs inputs;
  inputs.gpu = gpu ? &*gpu : nullptr;
  inputs.cpu = cpu ? &*cpu : nullptr;
  inputs.ops = in.ops ? &*in.ops : nullptr;
  inputs.kernels = in.kernels.empty() ? nullptr : &in.kernels;
  inputs.kernel_time = kernel_time_facts(v.baseline);
  if (v.range_span) {
    // Inside a range there is no start-up; the CPU rules' shares are of the range.
    inputs.window =
        TimeWindow{v.range_span->start, v.range_span->end, *in.range, v.range_span->instances};
  }
  Diagnosis d = diagnose(inputs, in.thresholds);
  v.findings = d.findings;
  v.cpu_base_ns = d.cpu_base_ns;
  if (gpu && d.idle.has_activity) {
    v.shapes_known = has_launch_shapes(*gpu);
    v.gpu = std::move(d);
  }
  if (v.gpu) {
    judge_gpu(*v.gpu, v);
  } else {
    judge_host(v);
  }
  if (v.verdict.empty()) {
    v.verdict = "no verdict: no measured run succeeded, so there is no time to explain";
  }
  return v;
}

bool explained_before_kernels(const Diagnosis& gpu) {
  if (!gpu.idle.has_activity) return true;
  return std::any_of(gpu.findings.begin(), gpu.findings.end(),
                     [](const Finding& f) { return f.layer == FindingLayer::kTimeline; });
}

std::vector<std::string> top_kernels(const store::GpuTables& tables, size_t n, double min_share) {
  std::map<std::string, int64_t> total;
  int64_t all = 0;
  const auto& k = tables.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const std::string* name = tables.string(k.name_id[i]);
    if (name == nullptr) continue;
    const int64_t ns = std::max<int64_t>(0, k.end[i] - k.start[i]);
    total[*name] += ns;
    all += ns;
  }
  std::vector<std::pair<std::string, int64_t>> sorted(total.begin(), total.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> names;
  for (size_t i = 0; i < sorted.size() && i < n; ++i) {
    if (static_cast<double>(sorted[i].second) < min_share * static_cast<double>(all)) break;
    names.push_back(sorted[i].first);
  }
  return names;
}

}  // namespace strata::analysis
