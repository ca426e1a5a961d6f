// The GPU timeline's rules (docs/diagnose.md, "Rules"): where the GPU idled
// and why, from the idle breakdown of gpu_idle.h, with the op table's
// evidence where the trace has PyTorch ops.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/diagnosis_rules.h"
#include "analysis/gpu_summary.h"
#include "analysis/torch_op_table.h"
#include "common/global_id.h"

namespace strata::analysis::diag {
namespace {

std::string api_name(const store::GpuTables& t, int64_t id) {
  const std::string* s = t.string(id);
  return s ? strip_version_suffix(*s) : "[unknown]";
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

bool in_window(const GpuIdle& idle, int64_t start) {
  return start >= idle.window_start && start < idle.window_end;
}

// The copies of the work window, with what issued them.
struct CopyFacts {
  int64_t device_to_host = 0;  // copies to the host: read-backs (.item(), .cpu())
  int64_t pageable = 0;        // from or to pageable host memory
  int64_t synchronous = 0;     // issued by a synchronous call (cudaMemcpy without Async)
  int64_t flagged_ns = 0;      // durations of the pageable or synchronous ones
  int64_t flagged_bytes = 0;
};

bool is_device_to_host(const store::GpuTables& t, int64_t kind) {
  auto label = t.memcpy_labels.find(kind);
  if (label != t.memcpy_labels.end()) return label->second == "Device-to-Host";
  return kind == 2;  // ENUM_CUDA_MEMCPY_OPER's DtoH where the enum table is absent
}

CopyFacts copy_facts(const store::GpuTables& t, const GpuIdle& idle) {
  std::map<std::pair<int64_t, int64_t>, int64_t> issuer_name;  // (pid, correlation) -> name id
  for (size_t i = 0; i < t.runtime.size(); ++i) {
    if (t.runtime.correlation_id[i] == 0) continue;
    issuer_name[{global_id::process_of(t.runtime.global_tid[i]), t.runtime.correlation_id[i]}] =
        t.runtime.name_id[i];
  }
  // A copy after the last kernel started reads the result back once: the
  // run's end, not the loop's (as copies before the first kernel are start-up).
  int64_t last_kernel = INT64_MIN;
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    if (in_window(idle, t.kernels.start[i]))
      last_kernel = std::max(last_kernel, t.kernels.start[i]);
  }
  const store::MemOpColumns& m = t.memcpy;
  CopyFacts f;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.start[i] < 0 || m.end[i] < m.start[i] || !in_window(idle, m.start[i])) continue;
    if (m.start[i] > last_kernel) continue;
    if (i < m.copy_kind.size() && is_device_to_host(t, m.copy_kind[i])) ++f.device_to_host;
    const bool pageable = (i < m.src_kind.size() && m.src_kind[i] == store::kMemKindPageable) ||
                          (i < m.dst_kind.size() && m.dst_kind[i] == store::kMemKindPageable);
    bool synchronous = false;
    if (i < m.correlation_id.size() && i < m.global_pid.size()) {
      auto found = issuer_name.find({global_id::process_of(m.global_pid[i]), m.correlation_id[i]});
      if (found != issuer_name.end()) {
        const std::string* name = t.string(found->second);
        synchronous = name && api_role(*name) == ApiRole::kSync;
      }
    }
    f.pageable += pageable;
    f.synchronous += synchronous;
    if (pageable || synchronous) {  // saturating: a damaged file's durations may be huge
      f.flagged_ns =
          std::min(f.flagged_ns, INT64_MAX - (m.end[i] - m.start[i])) + (m.end[i] - m.start[i]);
      const int64_t bytes = std::max<int64_t>(m.bytes[i], 0);
      f.flagged_bytes = std::min(f.flagged_bytes, INT64_MAX - bytes) + bytes;
    }
  }
  return f;
}

// The op table's hint (the tutorial: "many aten::mm with short CUDA times:
// suspect launch/sync before the kernel"): the most frequent op that
// launched short kernels and spent longer on the CPU than on the GPU.
std::optional<std::string> op_hint(const RuleContext& c) {
  if (!c.ops || c.ops->ops.empty()) return std::nullopt;
  auto table = torch_op_table(*c.ops);
  if (!table) return std::nullopt;
  const TorchOpTableRow* best = nullptr;
  for (const auto& r : table->rows) {
    if (r.device || r.calls < 2 || r.self_cuda_ns <= 0) continue;
    const double cuda = static_cast<double>(r.self_cuda_ns) / r.calls;
    const double cpu = static_cast<double>(r.cpu_total_ns) / r.calls;
    if (cuda >= c.th.short_kernel_ns || cpu <= cuda) continue;
    if (!best || r.calls > best->calls || (r.calls == best->calls && r.name < best->name)) {
      best = &r;
    }
  }
  if (!best) return std::nullopt;
  return fmt::format(
      "op layer: {} x{}, CUDA {} per call against CPU {} per call: many ops with "
      "short CUDA times, the launch and sync around each kernel cost more than it",
      best->name, best->calls, short_duration(best->self_cuda_ns / best->calls),
      short_duration(best->cpu_total_ns / best->calls));
}

// .item(), .cpu(), print(tensor): ops that copy a value to the host and wait.
struct ImplicitSyncs {
  int64_t calls = 0;
  std::string evidence;
};
std::optional<ImplicitSyncs> implicit_sync_ops(const RuleContext& c) {
  if (!c.ops) return std::nullopt;
  int64_t item = 0, local_scalar = 0;
  for (const auto& op : c.ops->ops) {
    item += op.name == "aten::item";
    local_scalar += op.name == "aten::_local_scalar_dense";
  }
  if (item + local_scalar == 0) return std::nullopt;
  const int64_t calls = item > 0 ? item : local_scalar;
  return ImplicitSyncs{
      calls, fmt::format("implicit syncs: {} x{} (.item() copies the value to the host and waits "
                         "for the stream)",
                         item > 0 ? "aten::item" : "aten::_local_scalar_dense", calls)};
}

// gpu.launch_sync and gpu.launch_bound: the GPU idles while the host
// synchronizes or launches.
void launch_rules(const RuleContext& c, std::vector<Finding>& out) {
  const store::GpuTables& t = *c.gpu;
  const GpuIdle& idle = *c.idle;
  const int64_t window = idle.window_ns();
  int64_t launches = 0;    // kernels in the window
  int64_t short_busy = 0;  // the time of the window's short kernels themselves
  std::vector<int64_t> durations;
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    if (t.kernels.start[i] < 0 || t.kernels.end[i] < t.kernels.start[i]) continue;
    const int64_t duration = t.kernels.end[i] - t.kernels.start[i];
    durations.push_back(duration);
    if (!in_window(idle, t.kernels.start[i])) continue;
    ++launches;
    if (duration < c.th.short_kernel_ns)
      short_busy = std::min(short_busy, INT64_MAX - duration) + duration;
  }
  if (launches == 0) return;
  const auto syncs = count_calls(t, ApiRole::kSync, idle);
  const double per_launch = static_cast<double>(total_calls(syncs)) / launches;
  const bool sync_each = per_launch >= c.th.syncs_per_launch;
  const int64_t median = median_of(durations);
  const CopyFacts copies = copy_facts(t, idle);
  const auto hint = op_hint(c);
  const auto implicit = implicit_sync_ops(c);
  // A synchronous copy's wait is gpu.pageable_copy's.
  const int64_t sync_wait = idle.idle.sync_ns - idle.idle.copy_sync_ns;
  // Copies after the last kernel are left out above; so is their wait here
  // when it is the only one (a run that reads its result back once).
  const std::string counts = fmt::format(
      "in the work window: kernel launches: {}; synchronizing calls: {} ({:.2f} per launch{}{})",
      launches, total_calls(syncs), per_launch, syncs.empty() ? "" : ": ", name_counts(syncs, 3));
  const std::string sync_line = fmt::format(
      "GPU idle {} of the {} work window ({}): {} while the issuing thread synchronized, and {} "
      "after those waits in the same gaps (its own code, the next launch, the queue)",
      short_duration(idle.idle_ns()), short_duration(window), percent_of(idle.idle_ns(), window),
      short_duration(sync_wait), short_duration(idle.idle.after_sync_ns));
  const std::string launch_line = fmt::format(
      "GPU idle {} of the {} work window ({}): {} while the issuing thread launched, {} queued "
      "after the launch returned",
      short_duration(idle.idle_ns()), short_duration(window), percent_of(idle.idle_ns(), window),
      short_duration(idle.idle.launch_ns), short_duration(idle.idle.queued_ns));

  // The wait, and what it exposed: in a gap where the host first waited for
  // the GPU, its own code and the next launches run on an idle GPU that a
  // host running ahead would have kept fed.
  const int64_t sync_gain = sync_wait + idle.idle.after_sync_ns;
  if (sync_gain > 0 && sync_gain >= c.th.min_share * window) {
    Finding f;
    f.rule = "gpu.launch_sync";
    f.layer = FindingLayer::kTimeline;
    // The cause is an implicit sync when they are at least half the syncs: one
    // .item() reading the result at the end (the tutorial's slow loop, 129
    // cudaDeviceSynchronize besides) is not the loop's cause.
    const int64_t sync_calls = total_calls(syncs);
    const bool implicit_each =
        (implicit && 2 * implicit->calls >= sync_calls) ||
        (copies.device_to_host > 0 && 2 * copies.device_to_host >= sync_calls);
    if (sync_each) {
      f.cause =
          "The host synchronizes after (almost) every launch, so the GPU waits for each "
          "launch and each synchronization instead of running kernels back to back.";
    } else {
      f.cause = "The host waits for the GPU inside the loop, so the GPU runs dry at each wait.";
    }
    if (implicit_each) {
      f.cause.pop_back();
      f.cause += ": an implicit sync, such as .item()'s device-to-host copy.";
    }
    f.evidence.push_back(counts);
    if (implicit) f.evidence.push_back(implicit->evidence);
    if (copies.device_to_host > 0) {
      f.evidence.push_back(fmt::format(
          "device-to-host copies in the window: {} (each a read-back such as .item() or .cpu(); "
          "the host waits for it)",
          copies.device_to_host));
    }
    f.evidence.push_back(fmt::format("kernel duration: median {}", short_duration(median)));
    f.evidence.push_back(sync_line);
    if (hint) f.evidence.push_back(*hint);
    f.gain_ns = sync_gain;
    f.try_this = implicit_each
                     ? "Keep the value on the GPU (accumulate there, read it back once at the "
                       "end), or read it back every N steps."
                     : "Synchronize once, where the result is needed, and give each launch more "
                       "work (batch the loop into one launch, or capture it in a CUDA graph).";
    f.show_again = "--report cuda_api_sum,cuda_gpu_kern_sum";
    out.push_back(std::move(f));
  }

  // A storm of short kernels: launch overhead, in the call and in the queue.
  // The host's side of the launches, outside the syncs' gaps (those are
  // gpu.launch_sync's); queued gaps are the GPU's own launch latency, which
  // a host running ahead already hides.
  const int64_t launch_gain = std::max<int64_t>(
      0, idle.idle.launch_ns -
             std::min(idle.idle.launch_ns, idle.idle.after_sync_ns - idle.idle.host_after_sync_ns));
  if (!sync_each && median < c.th.short_kernel_ns && launch_gain > 0 &&
      launch_gain >= c.th.min_share * window) {
    Finding f;
    f.rule = "gpu.launch_bound";
    f.layer = FindingLayer::kTimeline;
    f.cause =
        "The kernels are too short for their launches: the GPU finishes each one before "
        "the host has launched the next.";
    f.evidence.push_back(counts);
    f.evidence.push_back(fmt::format("kernel duration: median {} (short: below {})",
                                     short_duration(median),
                                     short_duration(static_cast<int64_t>(c.th.short_kernel_ns))));
    f.evidence.push_back(launch_line);
    f.evidence.push_back(
        fmt::format("the short kernels themselves: {} of GPU time", short_duration(short_busy)));
    if (hint) f.evidence.push_back(*hint);
    // Fused into fewer, larger kernels, the launches and most of each short
    // kernel's own fixed cost go: the bound is the idle launch time and the
    // short kernels' time together (the planted storm: 0.41x its saving on
    // the idle time alone).
    f.gain_ns = std::min(launch_gain, INT64_MAX - short_busy) + short_busy;
    f.try_this =
        "Give each launch more work: fuse or batch the kernels, or capture the loop in "
        "a CUDA graph (torch.compile, CUDA graphs).";
    f.show_again = "--report cuda_api_sum,cuda_gpu_kern_sum,cuda_kern_exec_sum";
    out.push_back(std::move(f));
  }

  // Pageable or synchronous copies: staged through a bounce buffer and
  // blocking the host, they cannot overlap compute.
  const int64_t copy_gain =
      std::min(copies.flagged_ns, INT64_MAX - idle.idle.copy_sync_ns) + idle.idle.copy_sync_ns;
  if (copy_gain > 0 && copy_gain >= c.th.min_share * window) {
    Finding f;
    f.rule = "gpu.pageable_copy";
    f.layer = FindingLayer::kTimeline;
    f.cause =
        "Copies from or to pageable host memory, or issued synchronously, block the host "
        "and cannot overlap the kernels.";
    f.evidence.push_back(fmt::format(
        "in the work window: {} copies from or to pageable memory, {} issued by a synchronous "
        "call; {} moved in {} of copying",
        copies.pageable, copies.synchronous, fmt::format("{} bytes", copies.flagged_bytes),
        short_duration(copies.flagged_ns)));
    f.evidence.push_back(fmt::format("GPU idle while the host was in a synchronous copy: {}",
                                     short_duration(idle.idle.copy_sync_ns)));
    f.gain_ns = copy_gain;
    f.try_this =
        "Allocate the host buffers pinned (cudaMallocHost, tensor.pin_memory()) and "
        "copy with cudaMemcpyAsync / non_blocking=True on a side stream.";
    f.show_again = "--report cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,cuda_api_sum";
    out.push_back(std::move(f));
  }
}

// gpu.host_between_launches: the GPU idles while the host runs its own code.
void host_rule(const RuleContext& c, std::vector<Finding>& out) {
  const GpuIdle& idle = *c.idle;
  // Host code in a gap that began with a sync is gpu.launch_sync's.
  const int64_t host_ns = idle.idle.host_ns - idle.idle.host_after_sync_ns;
  if (host_ns <= 0 || host_ns < c.th.min_share * idle.window_ns()) return;
  std::vector<HostInterval> intervals;
  for (const HostInterval& h : idle.host_intervals) {
    if (!h.after_sync) intervals.push_back(h);
  }
  Finding f;
  f.rule = "gpu.host_between_launches";
  f.layer = FindingLayer::kTimeline;
  const auto host = host_function_in(c, intervals);
  f.cause = host ? fmt::format(
                       "The GPU waits while the host runs its own code between launches "
                       "(mostly {}).",
                       host->label)
                 : "The GPU waits while the host runs its own code (outside recorded CUDA calls) "
                   "between launches.";
  f.evidence.push_back(
      fmt::format("GPU idle {} of the {} work window, {} of it ({}) while the "
                  "issuing thread was outside recorded CUDA calls, in gaps "
                  "without a synchronization",
                  short_duration(idle.idle_ns()), short_duration(idle.window_ns()),
                  short_duration(host_ns), percent_of(host_ns, idle.window_ns())));
  if (host) {
    f.evidence.push_back(fmt::format("CPU samples in those gaps: {} in {} of {} sampled",
                                     host->label, short_duration(host->ns),
                                     short_duration(host->sampled_ns)));
  } else if (!c.cpu) {
    f.evidence.push_back(
        "no CPU samples in the trace: record with --trace cuda,nvtx,cpu to name "
        "the host function");
  }
  f.gain_ns = host_ns;
  f.try_this = host ? "Take that code out of the loop: prepare the data ahead (a DataLoader with "
                      "workers, a prefetching thread) or do it on the GPU."
                    : "Find that code in the CPU layer (strata trace --trace cuda,nvtx,cpu, or "
                      "strata cpu) and take it out of the loop: prepare data ahead, on another "
                      "thread, or on the GPU.";
  f.show_again = host ? "--report nvtx_sum,cuda_api_sum; strata report FILE (the CPU profile)"
                      : "--report nvtx_sum,cuda_api_sum";
  out.push_back(std::move(f));
}

}  // namespace

void timeline_rules(const RuleContext& c, std::vector<Finding>& out) {
  if (!c.gpu || !c.idle || !c.idle->has_activity) return;
  launch_rules(c, out);
  host_rule(c, out);
}

// kernel.small_grid: a kernel that matters runs fewer blocks than the GPU has SMs.
void small_grid_rule(const RuleContext& c, std::vector<Finding>& out) {
  if (!c.gpu) return;
  const store::GpuTables& t = *c.gpu;
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
    if (p.total_ns < c.th.kernel_share * all_ns) continue;
    const std::string* name = t.string(id);
    Finding f;
    f.rule = "kernel.small_grid";
    f.layer = FindingLayer::kKernel;
    const std::string kernel = name ? *name : "[unknown]";
    f.cause = fmt::format("{} runs {} blocks on a GPU with {} SMs, so {} of the SMs get no work.",
                          kernel.size() > 48 ? kernel.substr(0, 47) + "…" : kernel, p.max_blocks,
                          p.sms, p.sms - p.max_blocks);
    f.evidence.push_back(fmt::format("kernel: {}", kernel));
    f.evidence.push_back(
        fmt::format("grid: {} blocks of {} threads; {} SMs; {} launches, {} in "
                    "total ({} of kernel time)",
                    p.max_blocks, p.threads, p.sms, p.instances,
                    short_duration(static_cast<int64_t>(std::min(p.total_ns, 9e18))),
                    fmt::format("{:.1f} %", 100.0 * p.total_ns / all_ns)));
    // An estimate, not a bound: spread over every SM the same work would
    // take blocks/SMs of the time if it scaled perfectly (ncu's "grid
    // smaller than the SM count" estimate); retiling may do better or worse.
    f.gain_ns = static_cast<int64_t>(
        std::min(p.total_ns * (1.0 - static_cast<double>(p.max_blocks) / p.sms), 9e18));
    f.try_this =
        "Give it at least one block per SM: smaller tiles, split the reduction "
        "dimension (split-K), or batch the launches into one larger grid.";
    f.show_again = "--report cuda_gpu_kern_sum";
    out.push_back(std::move(f));
  }
}

}  // namespace strata::analysis::diag
