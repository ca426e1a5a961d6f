// The wall-time part of `strata compare`: each quantity of two sets of runs
// (wall, user, sys, peak RSS, --metric values) compared, with a test of
// significance, and the verdict and --gate decision drawn from the wall time.
//
// The statistics (docs/cli.md, strata compare): Welch's t-test on the
// logarithms of the values. Run times are positive and skewed to the right,
// and what changes between two versions is a factor, which the log makes a
// difference: the test's interval for the difference of the mean logs,
// exponentiated, is a confidence interval for the ratio B/A of the geometric
// means. Welch's form does not assume both sides equally noisy. It works
// from two runs per side, where a rank test cannot reach p < 0.05 with fewer
// than four. One run on a side allows no test, and none is claimed.
//
// Pure functions, no I/O.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stats.h"
#include "store/trace_db.h"

namespace strata::analysis {

// One quantity's measured values on one side.
struct QuantitySamples {
  std::string name;  // "wall", "user", "sys", "peak RSS" or a metric key
  std::string unit;  // "ms", "MiB", "" for metrics
  std::vector<double> values;
};

// The bench quantities (analysis/bench.h) of the measured runs of `label`
// that exited 0, metrics included; a quantity no such run has is left out.
std::vector<QuantitySamples> bench_samples(std::span<const store::BenchRun> runs,
                                           std::string_view label);

// Welch's test on the logs, read back as ratios.
struct RatioTest {
  double ci_low = 0;  // confidence interval of the ratio of geometric means B/A
  double ci_high = 0;
  double confidence = 0.95;
  double p = 1;   // two-sided, of "B and A have the same geometric mean"
  double df = 0;  // Welch–Satterthwaite degrees of freedom
};

struct QuantityComparison {
  std::string name;
  std::string unit;
  Summary a;  // base
  Summary b;  // new
  // B/A of the geometric means (of the values themselves with one run per
  // side); nullopt when a value is 0 or negative, which has no logarithm.
  std::optional<double> ratio;
  std::optional<RatioTest> test;
  std::string untested;  // why there is no test, when there is none
};

struct WallComparison {
  std::vector<QuantityComparison> quantities;  // A's order; those both sides have
  double confidence = 0.95;
};

WallComparison compare_quantities(std::span<const QuantitySamples> a,
                                  std::span<const QuantitySamples> b, double confidence = 0.95);

// What the verdict and the gate are drawn from.
inline constexpr std::string_view kVerdictQuantity = "wall";
inline constexpr double kSignificanceLevel = 0.05;  // alpha: p below it is significant
inline constexpr double kDefaultMinChange = 0.01;   // a change under 1 % is no change

enum class Verdict { kImproved, kRegressed, kNoSignificantChange, kUntested };

// "improved", "regressed", "no significant change", "untested".
std::string_view verdict_name(Verdict verdict);

struct VerdictResult {
  Verdict verdict = Verdict::kUntested;
  // The wall time compared, when both sides have one measured alike: the
  // numbers behind the verdict (report/compare_report.h words them).
  std::optional<QuantityComparison> wall;
  bool within_min_change = false;  // significant, but moved less than min_change
  double min_change = kDefaultMinChange;
};

// Improved or regressed: the wall time's test is significant (p < alpha)
// and the ratio moved by at least `min_change` (a fraction: 0.01 is 1 %).
// No significant change: p >= alpha, or a significant move smaller than
// `min_change`. Untested: no wall time on both sides measured alike, or one
// run on a side: no verdict is claimed, whatever the layers show.
VerdictResult decide_verdict(const std::optional<WallComparison>& wall,
                             double min_change = kDefaultMinChange);

struct GateResult {
  bool checked = false;  // false: no test was possible (VerdictResult says why); exit 0
  bool failed = false;   // B is slower by more than the gate, significantly
};

// --gate PCT: fails when the wall time's test is significant and B/A is
// above 1 + PCT / 100.
GateResult check_gate(const VerdictResult& verdict, double percent);

}  // namespace strata::analysis
