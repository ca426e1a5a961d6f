// cpu.kernel_time (docs/diagnose.md, "CPU layer"): the program's time in the
// kernel, faulting in memory it gave back. The sampler records user-mode time
// only (exclude_kernel), so no sample shows this time: the rule reads the bare
// runs' rusage (sys time, page faults, peak RSS) instead. A loop that takes a
// fresh large buffer per iteration (malloc maps blocks above its threshold
// and unmaps them when freed) has every page of it zeroed and mapped again
// each time: on the dev machine 60 buffers of 64 MiB made 983,000 faults and
// 5.7 s of sys time against 0.18 s for the same fills into one kept buffer
// (examples/planted/page_churn.py).
#include <fmt/format.h>

#include <algorithm>

#include "analysis/diagnosis_rules.h"

namespace strata::analysis::diag {
namespace {

// A minor fault maps one base page (x86-64's 4 KiB); a transparent huge page
// counts once for 2 MiB, so churn in huge pages reads low here: the rule errs
// toward silence, never toward a finding.
constexpr double kPageBytes = 4096;

std::string mebibytes(double bytes) {
  return fmt::format("{:.0f} MiB", bytes / (1 << 20));
}

}  // namespace

void cpu_kernel_time_rule(const RuleContext& c, std::vector<Finding>& out) {
  if (!c.kernel_time) return;
  const KernelTimeFacts& k = *c.kernel_time;
  if (k.sys_ns <= 0 || k.cpu_ns <= 0 || k.minor_faults <= 0 || k.peak_rss_kb <= 0) return;
  const double faulted = static_cast<double>(k.minor_faults) * kPageBytes;
  const double rss = static_cast<double>(k.peak_rss_kb) * 1024;
  const double times_over = faulted / rss;
  if (times_over < c.th.refault_ratio) return;
  if (static_cast<double>(k.sys_ns) < c.th.kernel_time_share * static_cast<double>(k.cpu_ns)) {
    return;
  }
  // Faulting the peak RSS in once is the program's floor; the faults beyond
  // it are memory faulted in again, and the kernel's time is taken to scale
  // with the faults.
  const double again = 1.0 - rss / faulted;
  const auto gain = static_cast<int64_t>(static_cast<double>(k.sys_ns) * again);
  const int64_t base = c.cpu_base_ns > 0 ? c.cpu_base_ns : k.wall_ns;
  if (gain <= 0 || static_cast<double>(gain) < c.th.min_share * static_cast<double>(base)) return;
  Finding f;
  f.rule = "cpu.kernel_time";
  f.layer = FindingLayer::kCpu;
  f.cause = fmt::format(
      "The kernel spends {} ({} of the CPU time) faulting memory in: the program gives memory "
      "back and faults it in again, {:.1f} times its peak RSS, time no sample shows.",
      short_duration(k.sys_ns), percent_of(k.sys_ns, k.cpu_ns), times_over);
  f.evidence.push_back(fmt::format(
      "kernel (sys) time {} of {} CPU time (user + sys), median of {} bare runs; the sampler "
      "records user-mode time only, so the samples leave it out",
      short_duration(k.sys_ns), short_duration(k.cpu_ns), k.runs));
  f.evidence.push_back(
      fmt::format("page faults: {} ({} at {:.0f} KiB a page) against a peak RSS of {}",
                  k.minor_faults, mebibytes(faulted), kPageBytes / 1024, mebibytes(rss)));
  f.evidence.push_back(fmt::format(
      "could save: the kernel time's share beyond faulting the peak RSS in once ({:.1f} %)",
      100 * again));
  f.gain_ns = gain;
  f.try_this =
      "Keep the buffers the loop allocates and reuse them (allocate once outside the loop, a "
      "pool, out= arguments); for large malloc blocks, mallopt's M_MMAP_THRESHOLD and "
      "M_TRIM_THRESHOLD (or MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ in the "
      "environment) keep freed memory in the heap. The samples' hottest line is where the "
      "memory is first touched.";
  f.show_again = "--report diagnosis (the Baseline and Recorded run lines: CPU time, page faults)";
  out.push_back(std::move(f));
}

}  // namespace strata::analysis::diag
