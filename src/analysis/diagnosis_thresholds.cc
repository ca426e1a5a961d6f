#include "analysis/diagnosis_thresholds.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "common/strings.h"

namespace strata::analysis {

std::span<const ThresholdInfo> threshold_table() {
  using T = DiagnosisThresholds;
  static constexpr ThresholdInfo kTable[] = {
      {"min_share", &T::min_share,
       "share of the time diagnosed a finding must account for to be reported", 0, 1},
      {"syncs_per_launch", &T::syncs_per_launch,
       "synchronizing calls per launch from which the loop syncs after every launch", 0, 1e9},
      {"kernel_share", &T::kernel_share,
       "share of kernel time a kernel needs before the kernel rules look at it", 0, 1},
      {"short_kernel_ns", &T::short_kernel_ns,
       "median kernel duration (ns) below which launch overhead can dominate", 0, 1e12},
      {"stop_share", &T::stop_share,
       "share of the time a CPU hotspot must hold to explain the run (stop descending)", 0, 1},
      {"off_cpu_gap_periods", &T::off_cpu_gap_periods,
       "sampling periods between two samples of a thread from which the pause is off-CPU", 1, 1e9},
      {"off_cpu_min_pause_ns", &T::off_cpu_min_pause_ns,
       "pause (ns) between a thread's samples that is off-CPU waiting whatever its pattern", 0,
       1e12},
      {"off_cpu_regular_cv", &T::off_cpu_regular_cv,
       "coefficient of variation up to which repeated shorter pauses are a wait, not preemption", 0,
       1e9},
      {"kernel_time_share", &T::kernel_time_share,
       "share of the bare runs' CPU time the kernel's (sys) must hold for cpu.kernel_time", 0, 1},
      {"refault_ratio", &T::refault_ratio,
       "times the peak RSS the page faults must fault in for cpu.kernel_time", 0, 1e9},
      {"sol_high_pct", &T::sol_high_pct,
       "% of peak from which a unit (compute, memory) is at the roofline", 0, 100},
      {"memory_roofline_pct", &T::memory_roofline_pct,
       "% of peak from which memory throughput is at the memory roofline", 0, 100},
      {"sol_latency_pct", &T::sol_latency_pct,
       "% of peak below which both units mean a latency-bound kernel", 0, 100},
      {"occupancy_pct", &T::occupancy_pct,
       "theoretical occupancy (%) below which its limiter is named", 0, 100},
  };
  return kTable;
}

Status set_threshold(DiagnosisThresholds& thresholds, std::string_view name, double value) {
  std::string known;
  for (const ThresholdInfo& t : threshold_table()) {
    if (name == t.name) {
      if (!std::isfinite(value) || value < t.lowest || value > t.highest) {
        return make_error(fmt::format("threshold {}: {} is outside [{}, {}]", t.name, value,
                                      t.lowest, t.highest));
      }
      thresholds.*t.field = value;
      return Ok{};
    }
    known += known.empty() ? t.name : std::string(", ") + t.name;
  }
  return make_error(fmt::format("unknown threshold '{}' (known: {})", printable(name), known));
}

Status parse_threshold(DiagnosisThresholds& thresholds, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return make_error(fmt::format("threshold '{}': expected NAME=VALUE", printable(assignment)));
  }
  const std::string value(assignment.substr(eq + 1));
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE) {
    return make_error(fmt::format("threshold '{}': '{}' is not a number",
                                  printable(assignment.substr(0, eq)), printable(value)));
  }
  return set_threshold(thresholds, assignment.substr(0, eq), v);
}

}  // namespace strata::analysis
