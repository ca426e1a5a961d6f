#include "analysis/bench.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

store::BenchRun run(std::string label, int iteration, double wall_ms, bool warmup = false,
                    int status = 0) {
  store::BenchRun r;
  r.label = std::move(label);
  r.command = {"prog", r.label};
  r.iteration = iteration;
  r.warmup = warmup;
  r.wall_ns = static_cast<int64_t>(wall_ms * 1e6);
  r.user_ns = r.wall_ns / 2;
  r.max_rss_kb = 2048;
  r.exit_status = status;
  return r;
}

TEST(SummarizeBench, MinMedianMaxOfMeasuredRunsOnly) {
  std::vector<store::BenchRun> runs = {run("A", 0, 1000, true), run("A", 0, 10), run("A", 1, 30),
                                       run("A", 2, 20)};
  auto s = summarize_bench(runs, {});
  ASSERT_EQ(s.commands.size(), 1u);
  const auto& wall = s.commands[0].values[0];
  ASSERT_TRUE(wall);
  EXPECT_EQ(wall->count, 3u);  // the warm-up is left out
  EXPECT_DOUBLE_EQ(wall->min, 10);
  EXPECT_DOUBLE_EQ(wall->median, 20);
  EXPECT_DOUBLE_EQ(wall->max, 30);
  EXPECT_DOUBLE_EQ(s.commands[0].values[3]->median, 2.0);  // peak RSS in MiB
  EXPECT_TRUE(s.ratios.empty());
}

TEST(SummarizeBench, RatioIsPerPair) {
  // Pairwise ratios 2, 4, 3 -> median 3; the ratio of medians would be 20/10 = 2... here the
  // pairing matters: A = 20, 40, 30 and B = 10, 10, 10.
  std::vector<store::BenchRun> runs = {run("A", 0, 20), run("B", 0, 10), run("A", 1, 40),
                                       run("B", 1, 10), run("A", 2, 30), run("B", 2, 10)};
  auto s = summarize_bench(runs, {});
  ASSERT_EQ(s.ratios.size(), 5u);  // wall, user, sys, peak RSS, page faults
  ASSERT_TRUE(s.ratios[0]);
  EXPECT_EQ(s.ratios[0]->pairs, 3u);
  EXPECT_DOUBLE_EQ(s.ratios[0]->median, 3);
  EXPECT_DOUBLE_EQ(s.ratios[0]->min, 2);
  EXPECT_DOUBLE_EQ(s.ratios[0]->max, 4);
}

TEST(SummarizeBench, FailedRunsAreListedAndLeftOutOfStatistics) {
  auto killed = run("B", 1, 5);
  killed.exit_status.reset();
  killed.signal = 9;
  std::vector<store::BenchRun> runs = {run("A", 0, 20), run("B", 0, 10),           run("A", 1, 40),
                                       killed,          run("A", 2, 30, false, 1), run("B", 2, 10)};
  auto s = summarize_bench(runs, {});
  ASSERT_EQ(s.failures.size(), 2u);
  EXPECT_EQ(s.failures[0].label, "B");
  EXPECT_EQ(s.failures[0].signal, 9);
  EXPECT_EQ(s.failures[1].exit_status, 1);
  EXPECT_EQ(s.commands[0].succeeded, 2u);
  EXPECT_EQ(s.commands[0].measured, 3u);
  EXPECT_EQ(s.commands[1].values[0]->count, 2u);
  EXPECT_EQ(s.ratios[0]->pairs, 1u);  // only pair 0 has both runs succeeding
  EXPECT_DOUBLE_EQ(s.ratios[0]->median, 2);
}

TEST(SummarizeBench, MetricsUseTheLastValueAndReportMissingOnes) {
  auto a0 = run("A", 0, 1);
  a0.metrics = {{"elapsed_ms", 99}, {"elapsed_ms", 60}};
  auto a1 = run("A", 1, 1);  // printed nothing
  auto a2 = run("A", 2, 1);
  a2.metrics = {{"elapsed_ms", 70}};
  std::vector<store::BenchRun> runs = {a0, a1, a2};
  std::vector<std::string> keys = {"elapsed_ms"};
  auto s = summarize_bench(runs, keys);
  ASSERT_EQ(s.quantities.size(), 6u);
  EXPECT_EQ(s.quantities[5].name, "elapsed_ms");
  ASSERT_TRUE(s.commands[0].values[5]);
  EXPECT_EQ(s.commands[0].values[5]->count, 2u);
  EXPECT_DOUBLE_EQ(s.commands[0].values[5]->median, 65);
  ASSERT_EQ(s.missing_metrics.size(), 1u);
  EXPECT_EQ(s.missing_metrics[0].iteration, 1);
}

TEST(SummarizeBench, PageFaultsAreAQuantityWhereRecorded) {
  auto a0 = run("A", 0, 10);
  a0.minor_faults = 12'000;
  auto a1 = run("A", 1, 30);
  a1.minor_faults = 240'000;  // glibc's faulting heap mode: the slow run faults 20x
  auto a2 = run("A", 2, 11);
  a2.minor_faults = 13'000;
  auto old = run("B", 0, 10);  // a trace from before faults were stored
  std::vector<store::BenchRun> runs = {a0, a1, a2, old};
  auto s = summarize_bench(runs, {});
  ASSERT_GE(s.quantities.size(), 5u);
  EXPECT_EQ(s.quantities[4].name, "page faults");
  EXPECT_EQ(s.quantities[4].unit, "count");
  EXPECT_TRUE(s.quantities[4].left_out_when_absent);
  ASSERT_TRUE(s.commands[0].values[4]);
  EXPECT_EQ(s.commands[0].values[4]->count, 3u);
  EXPECT_DOUBLE_EQ(s.commands[0].values[4]->median, 13'000);
  EXPECT_DOUBLE_EQ(s.commands[0].values[4]->max, 240'000);
  EXPECT_FALSE(s.commands[1].values[4]);  // B's run has none: no value, not 0
}

TEST(FindMetric, ReadsTheSeedsOutputLine) {
  std::string line =
      "mode=slow lines=6000 elapsed_ms=67.840 top10=[('launch', 6602), ('occupancy', 6594)]";
  EXPECT_EQ(find_metric(line, "elapsed_ms"), 67.84);
  EXPECT_EQ(find_metric(line, "lines"), 6000);
  EXPECT_FALSE(find_metric(line, "mode").has_value());  // not a number
  EXPECT_FALSE(find_metric(line, "ms").has_value());    // must start a word
  EXPECT_FALSE(find_metric(line, "top").has_value());
}

TEST(FindMetric, AcceptsTrailingSeparators) {
  EXPECT_EQ(find_metric("a=1, b=2;", "a"), 1);
  EXPECT_EQ(find_metric("a=1, b=2;", "b"), 2);
  EXPECT_FALSE(find_metric("a=", "a").has_value());
}

}  // namespace
}  // namespace strata::analysis
