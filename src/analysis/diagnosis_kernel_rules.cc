// The kernel metrics' rules (docs/diagnose.md, "Rules"): for each kernel
// that matters, ncu's Speed Of Light verdict as a finding, with the
// occupancy limiter where occupancy explains a latency-bound kernel.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/diagnosis_rules.h"

namespace strata::analysis::diag {
namespace {

std::string limiter_names(unsigned limiters) {
  std::string out;
  auto add = [&](unsigned bit, const char* name) {
    if (!(limiters & bit)) return;
    if (!out.empty()) out += ", ";
    out += name;
  };
  add(kLimitRegisters, "registers");
  add(kLimitSharedMem, "shared memory");
  add(kLimitWarps, "warps (block size)");
  add(kLimitBlocks, "blocks per SM");
  add(kLimitBarriers, "barriers");
  return out.empty() ? "none" : out;
}

// The time each kernel name took: from the timeline where the trace has it
// (every launch), else the profiled launches' own durations.
std::map<std::string, double> kernel_times(const RuleContext& c) {
  std::map<std::string, double> out;
  if (c.gpu && c.gpu->kernels.size() > 0) {
    const store::KernelColumns& k = c.gpu->kernels;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.start[i] < 0 || k.end[i] < k.start[i]) continue;
      const std::string* name = c.gpu->string(k.name_id[i]);
      out[name ? *name : "[unknown]"] += static_cast<double>(k.end[i] - k.start[i]);
    }
    return out;
  }
  for (const KernelProfile& p : *c.kernels) {
    if (auto d = p.metric("gpu__time_duration.sum"); d && *d > 0 && *d < 1e15) {
      out[p.demangled] += *d;
    }
  }
  return out;
}

}  // namespace

void kernel_rules(const RuleContext& c, std::vector<Finding>& out,
                  std::vector<std::string>& not_checked) {
  if (!c.kernels || c.kernels->empty()) return;
  const auto times = kernel_times(c);
  double all = 0;
  for (const auto& [name, ns] : times) all += ns;
  const bool small_grid_seen = std::any_of(
      out.begin(), out.end(), [](const Finding& f) { return f.rule == "kernel.small_grid"; });
  std::map<std::string, bool> seen;  // the first profiled launch speaks for its name
  for (const KernelProfile& p : *c.kernels) {
    if (seen[p.demangled]) continue;
    seen[p.demangled] = true;
    const auto compute = p.metric("sm__throughput.avg.pct_of_peak_sustained_elapsed");
    const auto memory =
        p.metric("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
    if (!compute || !memory) {
      not_checked.push_back(
          fmt::format("kernel.* on {}: no Speed Of Light metrics recorded", p.demangled));
      continue;
    }
    if (!std::isfinite(*compute) || !std::isfinite(*memory)) continue;  // a damaged value
    auto t = times.find(p.demangled);
    const double ns = t == times.end() ? 0 : t->second;
    if (!std::isfinite(ns)) continue;
    if (all <= 0 || ns < c.th.kernel_share * all) continue;
    const double top = std::max(*compute, *memory);
    const int sms = p.device ? p.device->sm_count : 0;
    const int64_t grid = p.kernel ? p.kernel->grid_size.value_or(0) : 0;
    // Waves per SM; negative when the occupancy model could not compute it.
    const double waves = p.occupancy && p.occupancy->waves ? *p.occupancy->waves : -1.0;

    Finding f;
    f.layer = FindingLayer::kKernel;
    const std::string kernel =
        p.demangled.size() > 48 ? p.demangled.substr(0, 47) + "…" : p.demangled;
    const std::string sol = fmt::format(
        "Speed Of Light: compute (SM) throughput {:.1f} %, memory "
        "throughput {:.1f} % of peak",
        *compute, *memory);
    // The bound: at the roofline only less work helps, so the kernel's whole
    // time; below it, the time it would save running its leading unit at peak.
    double gain = ns * (1.0 - std::clamp(top, 0.0, 100.0) / 100.0);
    // A kernel at the compute roofline does what a GPU is for (the healthy
    // batched GEMM), whatever its memory throughput: cuBLAS's BF16 GEMM on
    // the H200 ran compute 90.9 % with memory 93.4 % (its L1/shared memory
    // feeding the tensor cores; DRAM 28.7 %), and was named memory-bound
    // when the larger of the two decided.
    if (*compute >= c.th.sol_high_pct) continue;
    // At the memory roofline and below the compute one, a kernel moves more
    // bytes than it must, or should be fused with its neighbours. Its
    // roofline is memory_roofline_pct, not sol_high_pct: the H200's DRAM
    // streams at 79 % of its nominal peak at best, and the planted
    // four-pass kernels there were read as "below the roofline" with a
    // bound of a seventh of what fusing them saved.
    if (*memory >= std::min(c.th.memory_roofline_pct, c.th.sol_high_pct)) {
      f.rule = "kernel.memory_bound";
      f.cause = fmt::format(
          "{} moves data at the memory roofline ({:.0f} % of peak): only moving "
          "fewer bytes makes it faster.",
          kernel, *memory);
      f.try_this =
          "Move fewer bytes: fuse it with the kernels before and after it, use a "
          "smaller data type (fp16/bf16/fp8), or reuse data from shared memory.";
      gain = ns;
    } else if (top < c.th.sol_latency_pct) {
      if (waves >= 0 && waves < 1.0 && sms > 0 && grid > 0 && grid < sms) {
        if (small_grid_seen) continue;  // the timeline's rule already names it
        f.rule = "kernel.small_grid";
        f.cause = fmt::format(
            "{} runs {} blocks on a GPU with {} SMs, so {} of the SMs get no "
            "work.",
            kernel, grid, sms, sms - grid);
        f.try_this =
            "Give it at least one block per SM: smaller tiles, split-K, or batch the "
            "launches into one larger grid.";
        gain = ns * (1.0 - static_cast<double>(grid) / sms);
      } else if (p.occupancy && p.occupancy->occupancy_pct < c.th.occupancy_pct) {
        f.rule = "kernel.occupancy";
        f.cause = fmt::format(
            "{} is latency-bound with a theoretical occupancy of {:.0f} %, "
            "limited by {}.",
            kernel, p.occupancy->occupancy_pct, limiter_names(p.occupancy->limiters));
        f.try_this =
            "Raise occupancy past its limiter (fewer registers per thread with "
            "__launch_bounds__, less shared memory per block, another block size) so "
            "more warps hide the latency.";
      } else {
        f.rule = "kernel.latency_bound";
        f.cause = fmt::format(
            "{} is latency-bound: neither compute nor memory is busy (below "
            "{:.0f} % of peak).",
            kernel, c.th.sol_latency_pct);
        f.try_this =
            "Expose more parallelism per thread (independent loads, unrolling), avoid "
            "dependent memory accesses and barriers in the hot loop.";
      }
    } else if (*memory >= *compute + 10) {
      f.rule = "kernel.memory_bound";
      f.cause = fmt::format(
          "{} is limited by memory ({:.0f} % of peak) below the roofline: its "
          "access pattern wastes bandwidth.",
          kernel, *memory);
      f.try_this =
          "Coalesce the accesses (consecutive threads, consecutive addresses), use "
          "vector loads, keep reused data in shared memory or L2.";
    } else if (*compute >= *memory + 10) {
      f.rule = "kernel.compute_bound";
      f.cause = fmt::format("{} is limited by compute ({:.0f} % of peak) below the roofline.",
                            kernel, *compute);
      f.try_this =
          "Use the faster pipes (tensor cores via cuBLAS/cuDNN or mma, fp16/bf16), "
          "cut instructions per element, avoid divergence.";
    } else {
      continue;  // balanced below the roofline: ncu names no single unit either
    }
    f.evidence.push_back(fmt::format("kernel: {}", p.demangled));
    f.evidence.push_back(sol);
    if (p.occupancy) {
      f.evidence.push_back(
          fmt::format("occupancy: theoretical {:.1f} % (limited by {}){}; grid {} blocks on {} SMs",
                      p.occupancy->occupancy_pct, limiter_names(p.occupancy->limiters),
                      waves >= 0 ? fmt::format(", {:.2f} waves", waves) : "", grid, sms));
    }
    f.evidence.push_back(fmt::format("kernel time: {} ({} of kernel time)",
                                     short_duration(static_cast<int64_t>(std::min(ns, 9e18))),
                                     fmt::format("{:.1f} %", 100.0 * ns / all)));
    f.gain_ns = static_cast<int64_t>(std::clamp(gain, 0.0, 9e18));
    f.show_again = "--report kernels";
    if (f.gain_ns > 0) out.push_back(std::move(f));
  }
}

}  // namespace strata::analysis::diag
