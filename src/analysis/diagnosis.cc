#include "analysis/diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <string_view>
#include <vector>

#include "analysis/diagnosis_rules.h"
#include "analysis/gpu_summary.h"
#include "analysis/idle_frames.h"
#include "analysis/python_view.h"
#include "common/strings.h"

namespace strata::analysis {

std::string short_duration(int64_t ns) {
  const double v = static_cast<double>(ns);
  auto three = [](double x) {
    return x >= 100  ? fmt::format("{:.0f}", x)
           : x >= 10 ? fmt::format("{:.1f}", x)
                     : fmt::format("{:.2f}", x);
  };
  if (ns < 1'000) return fmt::format("{} ns", ns);
  if (ns < 1'000'000) return three(v / 1e3) + " us";
  if (ns < 1'000'000'000) return three(v / 1e6) + " ms";
  return three(v / 1e9) + " s";
}

const char* finding_layer_name(FindingLayer layer) {
  switch (layer) {
    case FindingLayer::kCpu:
      return "cpu";
    case FindingLayer::kTimeline:
      return "timeline";
    case FindingLayer::kOps:
      return "ops";
    case FindingLayer::kKernel:
      return "kernel";
  }
  return "timeline";
}

namespace diag {

std::string percent_of(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) / whole) : "0 %";
}

int64_t median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace diag

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string api_name(const store::GpuTables& t, int64_t id) {
  const std::string* s = t.string(id);
  return s ? strip_version_suffix(*s) : "[unknown]";
}

bool overlaps(int64_t start, int64_t end, const TimeWindow& w) {
  return start < w.end && end > w.start;
}

// The tables with only the rows of the window: activities that start in it
// and CUDA calls that overlap it.
store::GpuTables clipped(const store::GpuTables& t, const TimeWindow& w) {
  store::GpuTables out = t;
  auto keep = [&](auto& cols, auto&& wanted, auto... members) {
    const size_t n = cols.start.size();
    std::vector<bool> k(n);
    for (size_t i = 0; i < n; ++i) k[i] = wanted(i);
    auto filter = [&](auto& v) {
      if (v.size() != n) return;  // an optional column not loaded
      size_t j = 0;
      for (size_t i = 0; i < n; ++i) {
        if (k[i]) v[j++] = v[i];
      }
      v.resize(j);
    };
    (filter(cols.*members), ...);
  };
  using R = store::RuntimeColumns;
  keep(
      out.runtime, [&](size_t i) { return overlaps(t.runtime.start[i], t.runtime.end[i], w); },
      &R::start, &R::end, &R::global_tid, &R::correlation_id, &R::name_id, &R::event_class);
  using K = store::KernelColumns;
  auto kernel_in = [&](size_t i) {
    return t.kernels.start[i] >= w.start && t.kernels.start[i] < w.end;
  };
  std::vector<bool> kept(t.kernels.size());
  for (size_t i = 0; i < kept.size(); ++i) kept[i] = kernel_in(i);
  keep(out.kernels, kernel_in, &K::start, &K::end, &K::name_id, &K::device_id, &K::correlation_id,
       &K::global_pid);
  using L = store::KernelLaunchColumns;
  auto launch_kept = [&](auto& v) {
    if (v.size() != kept.size()) return;
    size_t j = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept[i]) v[j++] = v[i];
    }
    v.resize(j);
  };
  L& l = out.kernels.launch;
  launch_kept(l.stream_id);
  launch_kept(l.grid);
  launch_kept(l.block);
  launch_kept(l.registers_per_thread);
  launch_kept(l.static_shared_memory);
  launch_kept(l.dynamic_shared_memory);
  using M = store::MemOpColumns;
  for (auto* ops : {&out.memcpy, &out.memset}) {
    const store::MemOpColumns source = *ops;
    keep(
        *ops, [&](size_t i) { return source.start[i] >= w.start && source.start[i] < w.end; },
        &M::start, &M::end, &M::bytes, &M::copy_kind, &M::global_pid, &M::device_id, &M::stream_id,
        &M::correlation_id, &M::src_kind, &M::dst_kind);
  }
  return out;
}

store::TorchOpRows clipped(const store::TorchOpRows& rows, const TimeWindow& w) {
  store::TorchOpRows out;
  for (const auto& op : rows.ops) {
    if (overlaps(op.start, op.end, w)) out.ops.push_back(op);
  }
  for (const auto& call : rows.runtime) {
    if (overlaps(call.start, call.end, w)) out.runtime.push_back(call);
  }
  for (const auto& d : rows.device) {
    if (d.start >= w.start && d.start < w.end) out.device.push_back(d);
  }
  out.correlations = rows.correlations;
  out.statuses = rows.statuses;
  return out;
}

// The CUDA start-up's parts: the heaviest calls before the first GPU
// activity, context creation and module loading (outermost calls only, so
// a driver call inside a runtime call counts once).
void cuda_startup(const store::GpuTables& t, int64_t before, Diagnosis& d) {
  std::map<int64_t, StartupPart> by_id;
  std::vector<size_t> rows;
  for (size_t i = 0; i < t.runtime.size(); ++i) {
    if (t.runtime.start[i] < 0 || t.runtime.end[i] < t.runtime.start[i]) continue;
    if (t.runtime.start[i] >= before) continue;
    rows.push_back(i);
    StartupPart& p = by_id[t.runtime.name_id[i]];
    // Saturating: calls of several threads overlap, so their sum is not
    // bounded by the start-up's length.
    const int64_t len = std::min(t.runtime.end[i], before) - t.runtime.start[i];
    p.total_ns = len > INT64_MAX - p.total_ns ? INT64_MAX : p.total_ns + len;
    ++p.calls;
  }
  for (auto& [id, p] : by_id) {
    p.name = api_name(t, id);
    d.startup_parts.push_back(p);
  }
  std::stable_sort(
      d.startup_parts.begin(), d.startup_parts.end(),
      [](const StartupPart& a, const StartupPart& b) { return a.total_ns > b.total_ns; });
  if (d.startup_parts.size() > 5) d.startup_parts.resize(5);

  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
    return t.runtime.start[a] != t.runtime.start[b] ? t.runtime.start[a] < t.runtime.start[b]
                                                    : t.runtime.end[a] > t.runtime.end[b];
  });
  std::map<int64_t, int64_t> context_end, module_end;  // per thread: the counted call's end
  for (size_t i : rows) {
    const std::string name = api_name(t, t.runtime.name_id[i]);
    const int64_t tid = t.runtime.global_tid[i];
    const int64_t start = t.runtime.start[i], end = std::min(t.runtime.end[i], before);
    // The runtime creates the primary context inside cudaSetDevice (CUDA
    // 12+) or the first call that needs it; the driver in cuCtxCreate or
    // cuDevicePrimaryCtxRetain.
    const bool context = name == "cudaSetDevice" || name == "cudaInitDevice" || name == "cuInit" ||
                         starts_with(name, "cuCtxCreate") ||
                         starts_with(name, "cuDevicePrimaryCtxRetain");
    const bool module = starts_with(name, "cuLibraryLoad") || starts_with(name, "cuModuleLoad");
    if (context && start >= context_end[tid]) {
      d.startup.context_ns += end - start;
      context_end[tid] = end;
    }
    if (module && start >= module_end[tid]) {
      d.startup.module_loading_ns += end - start;
      module_end[tid] = end;
    }
  }
}

// Per sample: whether start-up holds it (the interpreter without Python
// code, an import, CUDA's start-up), and start-up's CPU parts.
std::vector<bool> cpu_startup(const Profile& p, const Diagnosis& d, bool python,
                              StartupBreakdown& startup) {
  std::vector<bool> out(p.samples.size());
  const bool cuda_startup = d.startup_ns > 0;
  const int64_t cuda_from = d.idle.first_api_start, cuda_to = d.idle.window_start;
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const Sample& s = p.samples[i];
    const int64_t w = sample_weight_ns(p, s);
    if (python) {
      const PythonStartup part = python_startup_part(p, s);
      if (part == PythonStartup::kImport) {
        out[i] = true;
        startup.imports_ns += w;
        continue;
      }
      if (part == PythonStartup::kInterpreter) {
        out[i] = true;
        startup.interpreter_ns += w;
        continue;
      }
    }
    if (cuda_startup && s.time_ns >= cuda_from && s.time_ns < cuda_to) out[i] = true;
  }
  if (python) {
    ImportTable imports = python_imports(p);
    for (const ImportRow& r : imports.rows) {
      if (r.depth == 0 && startup.imports.size() < 5) startup.imports.push_back(r);
    }
  }
  return out;
}

Profile clipped(const Profile& p, const TimeWindow& w) {
  Profile out = p;
  std::erase_if(out.samples,
                [&](const Sample& s) { return s.time_ns < w.start || s.time_ns >= w.end; });
  return out;
}

}  // namespace

bool has_launch_shapes(const store::GpuTables& t) {
  return !t.sm_counts.empty() && t.kernels.size() > 0 &&
         t.kernels.launch.grid.size() == t.kernels.size() &&
         t.kernels.launch.block.size() == t.kernels.size();
}

Result<TimeWindow> find_range(const DiagnosisInputs& inputs, const std::string& name) {
  TimeWindow w;
  w.name = name;
  w.start = INT64_MAX;
  w.end = INT64_MIN;
  auto add = [&](int64_t start, int64_t end) {
    if (start < 0 || end < start) return;
    w.start = std::min(w.start, start);
    w.end = std::max(w.end, end);
    ++w.occurrences;
  };
  if (inputs.gpu) {
    const store::NvtxColumns& n = inputs.gpu->nvtx;
    for (size_t i = 0; i < n.size(); ++i) {
      const int32_t type = n.event_type[i];
      if (type != store::kNvtxPushPopRange && type != store::kNvtxStartEndRange &&
          type != store::kNvtxtPushPopRange && type != store::kNvtxtStartEndRange) {
        continue;
      }
      const std::string* text = nullptr;
      if (i < n.text_index.size() && n.text_index[i] >= 0 &&
          static_cast<size_t>(n.text_index[i]) < n.texts.size()) {
        text = &n.texts[static_cast<size_t>(n.text_index[i])];
      } else if (n.text_id[i] != store::kNoString) {
        text = inputs.gpu->string(n.text_id[i]);
      }
      if (!text || *text != name) continue;
      add(n.start[i], n.end[i] == store::NvtxColumns::kNoEnd ? n.max_timestamp : n.end[i]);
    }
  }
  if (inputs.ops) {
    for (const auto& op : inputs.ops->ops) {
      if (op.name == name) add(op.start, op.end);
    }
  }
  if (w.occurrences == 0) {
    return make_error(
        fmt::format("--range '{}': no NVTX range or PyTorch op / record_function "
                    "of that name in the trace",
                    printable(name)));
  }
  return w;
}

namespace {

// Damaged traces can hold any times: sums and differences saturate instead
// of overflowing, and a difference below zero counts as none.
int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

int64_t nonnegative_difference(int64_t end, int64_t start) {
  int64_t r = 0;
  return __builtin_sub_overflow(end, start, &r) || r < 0 ? 0 : r;
}

}  // namespace

Diagnosis diagnose(const DiagnosisInputs& in, const DiagnosisThresholds& th) {
  Diagnosis d;
  d.thresholds = th;
  d.window = in.window;
  // Inputs clipped to the window, when there is one.
  std::optional<store::GpuTables> gpu_in;
  std::optional<Profile> cpu_in;
  std::optional<store::TorchOpRows> ops_in;
  const store::GpuTables* gpu = in.gpu;
  const Profile* cpu = in.cpu;
  const store::TorchOpRows* ops = in.ops;
  if (in.window) {
    if (gpu) gpu = &gpu_in.emplace(clipped(*gpu, *in.window));
    if (cpu) cpu = &cpu_in.emplace(clipped(*cpu, *in.window));
    if (ops) ops = &ops_in.emplace(clipped(*ops, *in.window));
  }

  if (gpu) {
    d.idle = gpu_idle(*gpu);
    if (!in.window && d.idle.has_activity && d.idle.has_api &&
        d.idle.first_api_start < d.idle.window_start) {
      d.startup_ns = d.idle.window_start - d.idle.first_api_start;
      cuda_startup(*gpu, d.idle.window_start, d);
    }
  }

  diag::RuleContext c(th);
  c.gpu = gpu;
  c.idle = gpu && d.idle.has_activity ? &d.idle : nullptr;
  c.ops = ops;
  c.kernels = in.kernels;
  if (in.kernel_time && !in.window) c.kernel_time = &*in.kernel_time;
  if (in.kernel_time && in.window) {
    d.not_checked.push_back(
        "cpu.kernel_time: the baseline's kernel time and page faults are the whole run's, not "
        "the range's");
  }
  std::optional<Profile> view;
  if (cpu && !is_sampled(cpu->mode)) {
    d.not_checked.push_back(
        "cpu.hotspot, cpu.off_cpu: the CPU profile is instrumented, not "
        "sampled");
    cpu = nullptr;
  }
  std::optional<Profile> sane;
  if (cpu) {
    // A damaged trace's times and weights must not overflow the sums: each
    // sample's weight is made explicit and bounded (10 s), and samples
    // outside the clock's range are left out.
    Profile& q = sane.emplace(*cpu);
    for (Sample& s : q.samples)
      s.weight_ns = std::clamp<int64_t>(sample_weight_ns(*cpu, s), 1, 10'000'000'000);
    std::erase_if(q.samples,
                  [](const Sample& s) { return s.time_ns < 0 || s.time_ns > (int64_t{1} << 62); });
    // Idle-spinning samples (OpenBLAS's thread server, OpenMP workers) are a
    // pool waiting for work, not work: left out, as the CPU reports leave
    // them out (analysis/idle_frames.h). In a PyTorch program they outweigh
    // the program's own code (the planted suite on the H200).
    std::erase_if(q.samples, [&](const Sample& s) { return idle_rule_of(q, s) != nullptr; });
    cpu = &q;
  }
  if (cpu) {
    view = python_view(*cpu);
    const Profile& p = view ? *view : *cpu;
    c.cpu = &p;
    c.cpu_function_frame = diag::function_frames(p);
    c.cpu_startup = cpu_startup(p, d, view.has_value(), d.startup);
    if (in.window) {
      c.cpu_base_ns = nonnegative_difference(in.window->end, in.window->start);
    } else {
      int64_t sampled = 0;
      for (const Sample& s : p.samples) sampled = saturating_add(sampled, sample_weight_ns(p, s));
      const int64_t wall = std::max(p.wall_ns, sampled);
      int64_t startup = saturating_add(d.startup_ns, d.startup.interpreter_ns);
      startup = saturating_add(startup, d.startup.imports_ns);
      c.cpu_base_ns = nonnegative_difference(wall, startup);
    }
    d.cpu_base_ns = c.cpu_base_ns;
  }

  diag::cpu_hotspot_rule(c, d.findings);
  diag::cpu_off_cpu_rule(c, d.findings);
  diag::cpu_kernel_time_rule(c, d.findings);
  diag::timeline_rules(c, d.findings);
  diag::small_grid_rule(c, d.findings);
  diag::kernel_rules(c, d.findings, d.not_checked);
  if (gpu && d.idle.has_activity && !has_launch_shapes(*gpu) &&
      !(in.kernels && !in.kernels->empty())) {
    d.not_checked.push_back(
        "kernel.small_grid: the trace has no SM count (TARGET_INFO_GPU) or no "
        "kernel launch configurations");
  }
  std::stable_sort(d.findings.begin(), d.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.gain_ns > b.gain_ns; });
  return d;
}

Diagnosis diagnose_gpu_trace(const store::GpuTables& tables, const DiagnosisThresholds& th) {
  DiagnosisInputs in;
  in.gpu = &tables;
  return diagnose(in, th);
}

}  // namespace strata::analysis
