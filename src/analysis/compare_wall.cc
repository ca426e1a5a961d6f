#include "analysis/compare_wall.h"

#include <algorithm>
#include <cmath>

#include "analysis/bench.h"
#include "analysis/recorded_bench.h"
#include "analysis/welch_test.h"

namespace strata::analysis {
namespace {

bool all_positive(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return v > 0; });
}

std::vector<double> logs(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(std::log(v));
  return out;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

QuantityComparison compare_one(const QuantitySamples& a, const QuantitySamples& b,
                               double confidence) {
  QuantityComparison q;
  q.name = a.name;
  q.unit = a.unit;
  q.a = *summarize(a.values);
  q.b = *summarize(b.values);
  const bool positive = all_positive(a.values) && all_positive(b.values);
  if (positive) {
    auto la = logs(a.values);
    auto lb = logs(b.values);
    q.ratio = std::exp(mean(lb) - mean(la));
    if (auto w = welch_t_test(la, lb, confidence)) {
      q.test = RatioTest{std::exp(w->ci_low), std::exp(w->ci_high), confidence, w->p, w->df};
    }
  }
  if (!q.test) {
    if (a.values.size() < 2 && b.values.size() < 2) {
      q.untested = "one run per side";
    } else if (a.values.size() < 2) {
      q.untested = "one run of A";
    } else if (b.values.size() < 2) {
      q.untested = "one run of B";
    } else {
      q.untested = "a value of 0 or less has no logarithm";
    }
  }
  return q;
}

}  // namespace

std::vector<QuantitySamples> bench_samples(std::span<const store::BenchRun> runs,
                                           std::string_view label) {
  const std::vector<std::string> keys = recorded_metric_keys(runs);
  const std::vector<Quantity> quantities = bench_quantities(keys);
  std::vector<QuantitySamples> out;
  for (size_t q = 0; q < quantities.size(); ++q) {
    auto values = measured_values(runs, label, q, keys);
    if (values.empty()) continue;
    out.push_back({quantities[q].name, quantities[q].unit, std::move(values)});
  }
  return out;
}

WallComparison compare_quantities(std::span<const QuantitySamples> a,
                                  std::span<const QuantitySamples> b, double confidence) {
  WallComparison out;
  out.confidence = confidence;
  for (const auto& qa : a) {
    auto qb = std::find_if(b.begin(), b.end(), [&](const auto& q) { return q.name == qa.name; });
    if (qb == b.end() || qa.values.empty() || qb->values.empty()) continue;
    out.quantities.push_back(compare_one(qa, *qb, confidence));
  }
  return out;
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kImproved:
      return "improved";
    case Verdict::kRegressed:
      return "regressed";
    case Verdict::kNoSignificantChange:
      return "no significant change";
    case Verdict::kUntested:
      break;
  }
  return "untested";
}

VerdictResult decide_verdict(const std::optional<WallComparison>& wall, double min_change) {
  VerdictResult out;
  out.min_change = min_change;
  if (!wall) return out;
  for (const auto& q : wall->quantities) {
    if (q.name == kVerdictQuantity) out.wall = q;
  }
  if (!out.wall || !out.wall->test || !out.wall->ratio) return out;
  const double ratio = *out.wall->ratio;
  if (out.wall->test->p >= kSignificanceLevel) {
    out.verdict = Verdict::kNoSignificantChange;
  } else if (std::fabs(ratio - 1) < min_change) {
    out.verdict = Verdict::kNoSignificantChange;
    out.within_min_change = true;
  } else {
    out.verdict = ratio > 1 ? Verdict::kRegressed : Verdict::kImproved;
  }
  return out;
}

GateResult check_gate(const VerdictResult& verdict, double percent) {
  GateResult out;
  if (!verdict.wall || !verdict.wall->test || !verdict.wall->ratio) return out;
  out.checked = true;
  out.failed = verdict.wall->test->p<kSignificanceLevel&& * verdict.wall->ratio> 1 + percent / 100;
  return out;
}

}  // namespace strata::analysis
