#include "report/bench_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::report {
namespace {

analysis::BenchSummary two_command_summary(bool with_faults = false) {
  std::vector<store::BenchRun> runs;
  for (int i = 0; i < 3; ++i) {
    for (auto [label, ms] : {std::pair{"A", 30.0}, std::pair{"B", 10.0}}) {
      store::BenchRun r;
      r.label = label;
      r.command = {"cpu_hotspot", "--mode", label == std::string("A") ? "slow" : "fast"};
      r.iteration = i;
      r.wall_ns = static_cast<int64_t>((ms + i) * 1e6);
      r.exit_status = 0;
      r.metrics = {{"elapsed_ms", ms}};
      if (with_faults) r.minor_faults = label == std::string("A") ? 24'000 + i : 12'000;
      runs.push_back(r);
    }
  }
  store::BenchRun failed = runs.back();
  failed.iteration = 3;
  failed.exit_status = 2;
  runs.push_back(failed);
  std::vector<std::string> keys = {"elapsed_ms"};
  return analysis::summarize_bench(runs, keys);
}

TEST(BenchReport, TableShowsCommandsRatiosAndFailures) {
  std::string out = render_bench(two_command_summary(), {3, 1}, Format::kTable);
  EXPECT_NE(out.find("  A: cpu_hotspot --mode slow"), std::string::npos) << out;
  EXPECT_NE(out.find("interleaved A B A B"), std::string::npos);
  EXPECT_NE(out.find("A/B ratio per pair"), std::string::npos);
  EXPECT_NE(out.find("3.000x"), std::string::npos) << out;  // elapsed_ms 30 / 10
  EXPECT_NE(out.find("B run 4: exited with status 2"), std::string::npos) << out;
}

TEST(BenchReport, PageFaultsAreWholeCountsAndOnlyWhereRecorded) {
  std::string with = render_bench(two_command_summary(true), {3, 1}, Format::kTable);
  EXPECT_NE(with.find("page faults"), std::string::npos) << with;
  EXPECT_NE(with.find("24001"), std::string::npos) << with;  // A's median, no decimals
  EXPECT_EQ(with.find("24001.000"), std::string::npos) << with;
  EXPECT_NE(with.find("2.000x"), std::string::npos) << with;  // 24001 / 12000, per pair
  std::string without = render_bench(two_command_summary(false), {3, 1}, Format::kTable);
  EXPECT_EQ(without.find("page faults"), std::string::npos) << without;
  EXPECT_NE(without.find("peak RSS"), std::string::npos) << without;
}

TEST(BenchReport, JsonCarriesTheSameFacts) {
  auto doc = nlohmann::json::parse(render_bench(two_command_summary(), {3, 1}, Format::kJson));
  EXPECT_EQ(doc["commands"].size(), 2u);
  EXPECT_EQ(doc["failures"].size(), 1u);
  bool found = false;
  for (const auto& row : doc["ratios"]) {
    if (row["Quantity"] == "elapsed_ms") {
      found = true;
      EXPECT_DOUBLE_EQ(row["Median"].get<double>(), 3.0);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace strata::report
