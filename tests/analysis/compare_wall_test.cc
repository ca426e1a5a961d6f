// The wall-time comparison: Welch's test on log values read back as a ratio,
// the verdict and the --gate decision.
#include "analysis/compare_wall.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "analysis/welch_test.h"

namespace strata::analysis {
namespace {

std::vector<QuantitySamples> wall(std::vector<double> values) {
  return {{"wall", "ms", std::move(values)}};
}

std::optional<WallComparison> compared(std::vector<double> a, std::vector<double> b) {
  return compare_quantities(wall(std::move(a)), wall(std::move(b)));
}

const std::vector<double> kNoisy = {100, 104, 98, 101, 97};

TEST(CompareWall, RatioAndIntervalAreWelchOnTheLogs) {
  const std::vector<double> b = {130, 128, 133, 131, 126};
  auto c = compared(kNoisy, b);
  ASSERT_EQ(c->quantities.size(), 1u);
  const auto& q = c->quantities[0];
  ASSERT_TRUE(q.ratio && q.test) << q.untested;
  std::vector<double> la, lb;
  for (double v : kNoisy) la.push_back(std::log(v));
  for (double v : b) lb.push_back(std::log(v));
  auto w = welch_t_test(la, lb);
  ASSERT_TRUE(w);
  EXPECT_NEAR(*q.ratio, std::exp(w->difference), 1e-12);  // ratio of geometric means
  EXPECT_NEAR(q.test->ci_low, std::exp(w->ci_low), 1e-12);
  EXPECT_NEAR(q.test->ci_high, std::exp(w->ci_high), 1e-12);
  EXPECT_EQ(q.test->p, w->p);
  EXPECT_LT(q.test->ci_low, *q.ratio);
  EXPECT_GT(q.test->ci_high, *q.ratio);
  EXPECT_EQ(q.a.median, 100);
  EXPECT_EQ(q.b.median, 130);
}

TEST(CompareWall, TwiceAsSlowIsARegressionThatFailsAGateBelow100Percent) {
  std::vector<double> b;
  for (double v : kNoisy) b.push_back(2 * v);
  auto c = compared(kNoisy, b);
  EXPECT_NEAR(*c->quantities[0].ratio, 2.0, 1e-12);
  auto v = decide_verdict(c);
  EXPECT_EQ(v.verdict, Verdict::kRegressed);
  EXPECT_EQ(verdict_name(v.verdict), "regressed");
  EXPECT_TRUE(check_gate(v, 50).checked);
  EXPECT_TRUE(check_gate(v, 50).failed);
  EXPECT_TRUE(check_gate(v, 99).failed);
  EXPECT_FALSE(check_gate(v, 101).failed);  // +100 % is within a 101 % gate
  // The other way round: improved, and no gate fails on a speed-up.
  auto faster = decide_verdict(compared(b, kNoisy));
  EXPECT_EQ(faster.verdict, Verdict::kImproved);
  EXPECT_NEAR(*faster.wall->ratio, 0.5, 1e-12);
  EXPECT_FALSE(check_gate(faster, 0).failed);
}

TEST(CompareWall, TheSameRunsAreNoSignificantChange) {
  auto c = compared(kNoisy, kNoisy);
  const auto& q = c->quantities[0];
  EXPECT_EQ(*q.ratio, 1.0);
  EXPECT_EQ(q.test->p, 1.0);
  EXPECT_NEAR(q.test->ci_low * q.test->ci_high, 1.0, 1e-12);  // symmetric on the log scale
  auto v = decide_verdict(c);
  EXPECT_EQ(v.verdict, Verdict::kNoSignificantChange);
  EXPECT_FALSE(v.within_min_change);
  EXPECT_FALSE(check_gate(v, 0).failed);
}

TEST(CompareWall, NoiseHidesASmallChange) {
  // +3 % on runs that vary by +-30 %: not significant.
  auto c = compared({70, 130, 100, 85, 115}, {72, 134, 103, 88, 118});
  auto v = decide_verdict(c);
  EXPECT_GT(v.wall->test->p, 0.05);
  EXPECT_EQ(v.verdict, Verdict::kNoSignificantChange);
  EXPECT_TRUE(check_gate(v, 1).checked);
  EXPECT_FALSE(check_gate(v, 1).failed);  // not significant, whatever the gate
}

TEST(CompareWall, ASignificantChangeBelowMinChangeIsNoChange) {
  std::vector<double> a = {100.0, 100.01, 99.99, 100.02, 99.98};
  std::vector<double> b;
  for (double v : a) b.push_back(v * 1.005);
  auto c = compared(a, b);
  ASSERT_LT(c->quantities[0].test->p, 0.05);
  auto v = decide_verdict(c);  // the default 1 %
  EXPECT_EQ(v.verdict, Verdict::kNoSignificantChange);
  EXPECT_TRUE(v.within_min_change);
  EXPECT_EQ(decide_verdict(c, 0.001).verdict, Verdict::kRegressed);
  EXPECT_TRUE(check_gate(v, 0.4).failed);  // the gate has its own threshold
  EXPECT_FALSE(check_gate(v, 0.6).failed);
}

TEST(CompareWall, OneRunPerSideHasARatioButNoTest) {
  auto c = compared({200}, {150});
  const auto& q = c->quantities[0];
  EXPECT_NEAR(*q.ratio, 0.75, 1e-12);  // B / A
  EXPECT_FALSE(q.test);
  EXPECT_EQ(q.untested, "one run per side");
  auto v = decide_verdict(c);
  EXPECT_EQ(v.verdict, Verdict::kUntested);
  EXPECT_FALSE(check_gate(v, 0).checked);
  EXPECT_FALSE(check_gate(v, 0).failed);
  EXPECT_EQ(compared({200}, {150, 160})->quantities[0].untested, "one run of A");
  EXPECT_EQ(compared({200, 210}, {150})->quantities[0].untested, "one run of B");
}

TEST(CompareWall, ZeroHasNoLogarithm) {
  auto c = compare_quantities(std::vector<QuantitySamples>{{"sys", "ms", {0, 1, 2}}},
                              std::vector<QuantitySamples>{{"sys", "ms", {1, 1, 2}}});
  ASSERT_EQ(c.quantities.size(), 1u);
  EXPECT_FALSE(c.quantities[0].ratio);
  EXPECT_FALSE(c.quantities[0].test);
  EXPECT_EQ(c.quantities[0].untested, "a value of 0 or less has no logarithm");
}

TEST(CompareWall, OnlyQuantitiesBothSidesHaveInAsOrder) {
  std::vector<QuantitySamples> a = {
      {"wall", "ms", {1, 2}}, {"elapsed_ms", "", {1, 2}}, {"user", "ms", {1, 2}}};
  std::vector<QuantitySamples> b = {{"user", "ms", {1, 2}}, {"wall", "ms", {1, 2}}};
  auto c = compare_quantities(a, b);
  ASSERT_EQ(c.quantities.size(), 2u);
  EXPECT_EQ(c.quantities[0].name, "wall");
  EXPECT_EQ(c.quantities[1].name, "user");
}

TEST(CompareWall, NoWallNoVerdict) {
  EXPECT_EQ(decide_verdict(std::nullopt).verdict, Verdict::kUntested);
  EXPECT_FALSE(decide_verdict(std::nullopt).wall);
  auto user_only = compare_quantities(std::vector<QuantitySamples>{{"user", "ms", {1, 2}}},
                                      std::vector<QuantitySamples>{{"user", "ms", {3, 4}}});
  EXPECT_EQ(decide_verdict(user_only).verdict, Verdict::kUntested);
}

store::BenchRun run(std::string label, int iteration, double wall_ms, bool warmup = false,
                    int status = 0) {
  store::BenchRun r;
  r.label = std::move(label);
  r.iteration = iteration;
  r.warmup = warmup;
  r.wall_ns = static_cast<int64_t>(wall_ms * 1e6);
  r.user_ns = 1000000;
  r.max_rss_kb = 2048;
  r.exit_status = status;
  return r;
}

TEST(BenchSamples, MeasuredSuccessfulRunsOfOneCommandInIterationOrder) {
  std::vector<store::BenchRun> runs = {run("A", 0, 50, true), run("B", 0, 60, true),
                                       run("A", 1, 12),       run("B", 0, 20),
                                       run("A", 0, 11),       run("A", 2, 99, false, 1)};
  runs[4].metrics = {{"elapsed_ms", 3.0}, {"elapsed_ms", 4.0}};  // the last value counts
  auto a = bench_samples(runs, "A");
  ASSERT_GE(a.size(), 4u);
  EXPECT_EQ(a[0].name, "wall");
  EXPECT_EQ(a[0].values, (std::vector<double>{11, 12}));  // no warm-up, no failed run
  EXPECT_EQ(a[3].name, "peak RSS");
  EXPECT_EQ(a[3].values, (std::vector<double>{2, 2}));
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[4].name, "elapsed_ms");
  EXPECT_EQ(a[4].values, (std::vector<double>{4}));
  auto b = bench_samples(runs, "B");
  ASSERT_EQ(b.size(), 4u);  // no metric on B's runs
  EXPECT_EQ(b[0].values, (std::vector<double>{20}));
}

}  // namespace
}  // namespace strata::analysis
