// analysis/recorded_bench.h: a recorded bench trace summarized as `strata
// report` prints it (the keys and counts the bench verb had from its flags).
#include "analysis/recorded_bench.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

store::BenchRun run(const char* label, bool warmup, std::vector<std::pair<std::string, double>> m) {
  store::BenchRun r;
  r.label = label;
  r.command = {"prog"};
  r.warmup = warmup;
  r.wall_ns = 1'000'000;
  r.exit_status = 0;
  r.metrics = std::move(m);
  return r;
}

TEST(RecordedBench, KeysInFirstSeenOrderAndTheCountsOfA) {
  std::vector<store::BenchRun> runs = {
      run("A", true, {{"loss", 1}}),        run("A", false, {{"elapsed_ms", 5}, {"loss", 1}}),
      run("B", false, {{"tokens", 3}}),     run("A", false, {{"elapsed_ms", 6}}),
      run("B", false, {{"elapsed_ms", 7}}),
  };
  auto b = summarize_recorded_bench(runs);
  EXPECT_EQ(b.measured, 2u);
  EXPECT_EQ(b.warmups, 1u);
  std::vector<std::string> names;
  for (const auto& q : b.summary.quantities) names.push_back(q.name);
  // wall, user, sys, peak RSS, page faults, then the metrics as first seen.
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.end() - 3, names.end()),
            (std::vector<std::string>{"loss", "elapsed_ms", "tokens"}));
  EXPECT_EQ(b.summary.commands.size(), 2u);
}

TEST(RecordedBench, NoRunsNoCounts) {
  auto b = summarize_recorded_bench({});
  EXPECT_EQ(b.measured, 0u);
  EXPECT_EQ(b.warmups, 0u);
  EXPECT_TRUE(b.summary.commands.empty());
}

}  // namespace
}  // namespace strata::analysis
