#include "analysis/diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <string_view>
#include <vector>

#include "analysis/gpu_summary.h"

namespace strata::analysis {

std::string short_duration(int64_t ns) {
  const double v = static_cast<double>(ns);
  auto three = [](double x) {
    return x >= 100 ? fmt::format("{:.0f}", x) : x >= 10 ? fmt::format("{:.1f}", x)
                                                         : fmt::format("{:.2f}", x);
  };
  if (ns < 1'000) return fmt::format("{} ns", ns);
  if (ns < 1'000'000) return three(v / 1e3) + " us";
  if (ns < 1'000'000'000) return three(v / 1e6) + " ms";
  return three(v / 1e9) + " s";
}

namespace {

std::string percent_of(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) / whole) : "0 %";
}

std::string api_name(const store::GpuTables& t, int64_t id) {
  const std::string* s = t.string(id);
  return s ? strip_version_suffix(*s) : "[unknown]";
}

int64_t median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// The calls of one role, counted per name, most frequent first.
struct CallCount {
  std::string name;
  int64_t calls = 0;
};

// Calls that overlap the work window only (start-up's copies and frees are
// not the loop's), and only outermost ones: a driver call inside a runtime
// call is the same synchronization.
std::vector<CallCount> count_calls(const store::GpuTables& t, ApiRole role, const GpuIdle& idle) {
  const store::RuntimeColumns& api = t.runtime;
  std::map<int64_t, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.start[i] < 0 || api.end[i] < api.start[i]) continue;
    if (api.end[i] <= idle.window_start || api.start[i] >= idle.window_end) continue;
    by_thread[api.global_tid[i]].push_back(i);
  }
  std::map<int64_t, int64_t> per_id;
  for (auto& [tid, rows] : by_thread) {
    std::sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
      return api.start[a] != api.start[b] ? api.start[a] < api.start[b] : api.end[a] > api.end[b];
    });
    int64_t enclosing_end = INT64_MIN;
    for (size_t i : rows) {
      if (api.end[i] <= enclosing_end) continue;  // nested in an earlier call
      enclosing_end = api.end[i];
      const std::string* name = t.string(api.name_id[i]);
      if (api_role(name ? *name : "") == role) ++per_id[api.name_id[i]];
    }
  }
  std::vector<CallCount> out;
  for (auto [id, n] : per_id) out.push_back({api_name(t, id), n});
  std::stable_sort(out.begin(), out.end(),
                   [](const CallCount& a, const CallCount& b) { return a.calls > b.calls; });
  return out;
}

int64_t total_calls(const std::vector<CallCount>& counts) {
  int64_t n = 0;
  for (const auto& c : counts) n += c.calls;
  return n;
}

std::string name_counts(const std::vector<CallCount>& counts, size_t most) {
  std::string out;
  for (size_t i = 0; i < counts.size() && i < most; ++i) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} x{}", counts[i].name, counts[i].calls);
  }
  return out;
}

// gpu.launch_sync: the GPU idles while the host launches and waits.
void launch_sync_rule(const store::GpuTables& t, const GpuIdle& idle,
                      const DiagnosisThresholds& th, std::vector<Finding>& out) {
  const int64_t waited = idle.idle.sync_ns + idle.idle.launch_ns;
  if (waited <= 0 || waited < th.min_share * idle.window_ns() || t.kernels.size() == 0) return;
  const auto syncs = count_calls(t, ApiRole::kSync, idle);
  int64_t launches = 0;  // kernels in the window
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    if (t.kernels.start[i] >= idle.window_start && t.kernels.start[i] < idle.window_end) ++launches;
  }
  if (launches == 0) return;
  const double per_launch = static_cast<double>(total_calls(syncs)) / launches;
  std::vector<int64_t> durations;
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    if (t.kernels.start[i] >= 0 && t.kernels.end[i] >= t.kernels.start[i]) {
      durations.push_back(t.kernels.end[i] - t.kernels.start[i]);
    }
  }

  Finding f;
  f.rule = "gpu.launch_sync";
  f.layer = FindingLayer::kTimeline;
  const bool sync_each = per_launch >= th.syncs_per_launch;
  f.cause = sync_each
                ? "The host synchronizes after (almost) every launch, so the GPU waits for each "
                  "launch and each synchronization instead of running kernels back to back."
                : "The kernels are too short for their launches: the GPU finishes each one before "
                  "the host has launched the next.";
  f.evidence.push_back(fmt::format("in the work window: kernel launches: {}; synchronizing "
                                   "calls: {} ({:.2f} per launch{}{})",
                                   launches, total_calls(syncs), per_launch,
                                   syncs.empty() ? "" : ": ", name_counts(syncs, 3)));
  f.evidence.push_back(fmt::format("kernel duration: median {}", short_duration(median_of(durations))));
  f.evidence.push_back(fmt::format(
      "GPU idle {} of the {} work window ({}): {} while the issuing thread synchronized, {} "
      "while it launched",
      short_duration(idle.idle_ns()), short_duration(idle.window_ns()),
      percent_of(idle.idle_ns(), idle.window_ns()), short_duration(idle.idle.sync_ns),
      short_duration(idle.idle.launch_ns)));
  f.gain_ns = waited;
  f.try_this = sync_each ? "Synchronize once, where the result is needed, and give each launch "
                           "more work (batch the loop into one launch, or capture it in a CUDA "
                           "graph)."
                         : "Give each launch more work: fuse or batch the kernels, or capture "
                           "the loop in a CUDA graph (torch.compile, CUDA graphs).";
  f.show_again = "--report cuda_api_sum,cuda_gpu_kern_sum";
  out.push_back(std::move(f));
}

// gpu.host_between_launches: the GPU idles while the host runs its own code.
void host_rule(const GpuIdle& idle, const DiagnosisThresholds& th, std::vector<Finding>& out) {
  if (idle.idle.host_ns <= 0 || idle.idle.host_ns < th.min_share * idle.window_ns()) return;
  Finding f;
  f.rule = "gpu.host_between_launches";
  f.layer = FindingLayer::kTimeline;
  f.cause = "The GPU waits while the host runs its own code (outside recorded CUDA calls) "
            "between launches.";
  f.evidence.push_back(fmt::format("GPU idle {} of the {} work window, {} of it ({}) while the "
                                   "issuing thread was outside recorded CUDA calls",
                                   short_duration(idle.idle_ns()), short_duration(idle.window_ns()),
                                   short_duration(idle.idle.host_ns),
                                   percent_of(idle.idle.host_ns, idle.window_ns())));
  f.gain_ns = idle.idle.host_ns;
  f.try_this = "Find that code in the CPU layer (strata trace --trace cuda,nvtx,cpu, or strata "
               "cpu) and take it out of the loop: prepare data ahead, on another thread, or on "
               "the GPU.";
  f.show_again = "--report nvtx_sum,cuda_api_sum";  // where the loop's time goes, by range
  out.push_back(std::move(f));
}

// kernel.small_grid: a kernel that matters runs fewer blocks than the GPU has SMs.
void small_grid_rule(const store::GpuTables& t, const DiagnosisThresholds& th,
                     std::vector<Finding>& out) {
  const store::KernelColumns& k = t.kernels;
  if (!has_launch_shapes(t)) return;
  // Sums in double: kernels may overlap, so their durations may add past
  // int64 in a damaged file.
  struct PerName {
    double total_ns = 0;
    int64_t instances = 0;
    int64_t max_blocks = 0;
    int64_t threads = 0;
    int64_t sms = 0;
  };
  std::map<int64_t, PerName> by_name;
  double all_ns = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.start[i] < 0 || k.end[i] < k.start[i]) continue;
    const double d = static_cast<double>(k.end[i] - k.start[i]);
    all_ns += d;
    auto sm = t.sm_counts.find(i < k.device_id.size() ? k.device_id[i] : 0);
    if (sm == t.sm_counts.end()) continue;
    const auto& g = k.launch.grid[i];
    const auto& b = k.launch.block[i];
    if (g[0] <= 0) continue;  // NULL in the file: the launch configuration is unknown
    PerName& p = by_name[k.name_id[i]];
    p.total_ns += d;
    ++p.instances;
    // Clamped to CUDA's limits (x < 2^31, y and z < 2^16; blocks of at most
    // 1024 threads) so that a damaged file's dimensions cannot overflow.
    auto dim = [](int64_t v, int64_t most) { return std::clamp<int64_t>(v, 1, most); };
    const int64_t blocks = dim(g[0], (int64_t{1} << 31) - 1) * dim(g[1], 65535) * dim(g[2], 65535);
    if (blocks > p.max_blocks) {  // the widest launch speaks for the name
      p.max_blocks = blocks;
      p.threads = dim(b[0], 1024) * dim(b[1], 1024) * dim(b[2], 1024);
      p.sms = sm->second;
    }
  }
  if (all_ns <= 0) return;
  for (const auto& [id, p] : by_name) {
    if (p.max_blocks <= 0 || p.max_blocks >= p.sms) continue;
    if (p.total_ns < th.small_grid_kernel_share * all_ns) continue;
    const std::string* name = t.string(id);
    Finding f;
    f.rule = "kernel.small_grid";
    f.layer = FindingLayer::kKernel;
    const std::string kernel = name ? *name : "[unknown]";
    f.cause = fmt::format("{} runs {} blocks on a GPU with {} SMs, so {} of the SMs get no work.",
                          kernel.size() > 48 ? kernel.substr(0, 47) + "…" : kernel, p.max_blocks,
                          p.sms, p.sms - p.max_blocks);
    f.evidence.push_back(fmt::format("kernel: {}", kernel));
    f.evidence.push_back(fmt::format("grid: {} blocks of {} threads; {} SMs; {} launches, {} in "
                                     "total ({} of kernel time)",
                                     p.max_blocks, p.threads, p.sms, p.instances,
                                     short_duration(static_cast<int64_t>(std::min(p.total_ns, 9e18))),
                                     fmt::format("{:.1f} %", 100.0 * p.total_ns / all_ns)));
    // An estimate, not a bound: spread over every SM the same work would
    // take blocks/SMs of the time if it scaled perfectly (ncu's "grid
    // smaller than the SM count" estimate); retiling may do better or worse.
    f.gain_ns = static_cast<int64_t>(
        std::min(p.total_ns * (1.0 - static_cast<double>(p.max_blocks) / p.sms), 9e18));
    f.try_this = "Give it at least one block per SM: smaller tiles, split the reduction "
                 "dimension (split-K), or batch the launches into one larger grid.";
    f.show_again = "--report cuda_gpu_kern_sum";
    out.push_back(std::move(f));
  }
}

std::vector<StartupPart> startup_parts(const store::GpuTables& t, int64_t before) {
  std::map<int64_t, StartupPart> by_id;
  for (size_t i = 0; i < t.runtime.size(); ++i) {
    if (t.runtime.start[i] < 0 || t.runtime.end[i] < t.runtime.start[i]) continue;
    if (t.runtime.start[i] >= before) continue;
    StartupPart& p = by_id[t.runtime.name_id[i]];
    // Saturating: calls of several threads overlap, so their sum is not
    // bounded by the start-up's length.
    const int64_t d = std::min(t.runtime.end[i], before) - t.runtime.start[i];
    p.total_ns = d > INT64_MAX - p.total_ns ? INT64_MAX : p.total_ns + d;
    ++p.calls;
  }
  std::vector<StartupPart> out;
  for (auto& [id, p] : by_id) {
    p.name = api_name(t, id);
    out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(), [](const StartupPart& a, const StartupPart& b) {
    return a.total_ns > b.total_ns;
  });
  if (out.size() > 5) out.resize(5);
  return out;
}

}  // namespace

bool has_launch_shapes(const store::GpuTables& t) {
  return !t.sm_counts.empty() && t.kernels.size() > 0 &&
         t.kernels.launch.grid.size() == t.kernels.size() &&
         t.kernels.launch.block.size() == t.kernels.size();
}

Diagnosis diagnose_gpu_trace(const store::GpuTables& tables, const DiagnosisThresholds& th) {
  Diagnosis d;
  d.thresholds = th;
  d.idle = gpu_idle(tables);
  if (!d.idle.has_activity) return d;
  if (d.idle.has_api && d.idle.first_api_start < d.idle.window_start) {
    d.startup_ns = d.idle.window_start - d.idle.first_api_start;
    d.startup_parts = startup_parts(tables, d.idle.window_start);
  }
  launch_sync_rule(tables, d.idle, th, d.findings);
  host_rule(d.idle, th, d.findings);
  small_grid_rule(tables, th, d.findings);
  std::stable_sort(d.findings.begin(), d.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.gain_ns > b.gain_ns; });
  return d;
}

}  // namespace strata::analysis
