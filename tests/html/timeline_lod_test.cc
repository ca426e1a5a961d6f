#include "html/timeline_lod.h"

#include <gtest/gtest.h>

#include "common/global_id.h"

namespace strata::html {
namespace {

using global_id::make_pid;
using global_id::make_tid;

// n launches, each a cudaLaunchKernel and its kernel on stream 7.
exporter::GpuTimeline launches(int n) {
  exporter::GpuTimeline t;
  for (int i = 0; i < n; ++i) {
    const int64_t s = 1'000'000 + int64_t{i} * 2000;
    t.api_calls.push_back({s, s + 300, make_tid(10, 11), i + 1, false, "cudaLaunchKernel"});
    exporter::TimelineGpuOp op;
    op.start = s + 500;
    op.end = s + 1500;
    op.global_pid = make_pid(10);
    op.stream_id = 7;
    op.correlation_id = i + 1;
    op.name = i % 2 ? "k_odd" : "k_even";
    t.gpu_ops.push_back(op);
  }
  t.nvtx_ranges.push_back(
      {1'000'000, 1'000'000 + int64_t{n} * 2000, make_tid(10, 11), true, false, "outer", ""});
  return t;
}

TEST(TimelineLod, SmallTraceKeepsEveryEventAndArrow) {
  auto j = timeline_lod(launches(100));
  EXPECT_EQ(j["t0"], 1'000'000);
  EXPECT_EQ(j["events"], 201);
  EXPECT_EQ(j["kept"], 201);
  ASSERT_EQ(j["tracks"].size(), 3u);  // NVTX, CUDA API, stream 7
  EXPECT_EQ(j["tracks"][0]["name"], "NVTX");
  EXPECT_EQ(j["tracks"][1]["name"], "CUDA API");
  EXPECT_EQ(j["tracks"][2]["name"], "stream 7");
  EXPECT_EQ(j["arrows"].size(), 4u * 100);
  // The first arrow: API track 1 event 0 -> stream track 2 event 0.
  EXPECT_EQ(j["arrows"][0], 1);
  EXPECT_EQ(j["arrows"][1], 0);
  EXPECT_EQ(j["arrows"][2], 2);
  EXPECT_EQ(j["arrows"][3], 0);
  const auto& ev = j["tracks"][2]["events"];
  EXPECT_EQ(ev["s"][0], 500);   // from t0
  EXPECT_EQ(ev["s"][1], 2000);  // from the previous start
  EXPECT_EQ(ev["d"][0], 1000);
}

TEST(TimelineLod, BusyTracksBecomeBinsOverBudget) {
  TimelineLodOptions options;
  options.max_events = 1000;
  options.max_track_events = 500;
  auto j = timeline_lod(launches(5000), options);
  EXPECT_EQ(j["events"], 10001);
  EXPECT_EQ(j["kept"], 1);  // the NVTX range alone
  EXPECT_TRUE(j["tracks"][0]["raw"]);
  EXPECT_FALSE(j["tracks"][2]["raw"]);
  EXPECT_TRUE(j["arrows"].empty());
  const auto& levels = j["tracks"][2]["levels"];
  ASSERT_GE(levels.size(), 2u);
  // Level 0: 1024 bins over the span; every kernel is counted in some bin.
  int64_t counted = 0, bins = 0;
  for (const auto& c : levels[0]["c"]) counted += c.get<int64_t>();
  for (const auto& i : levels[0]["i"]) bins += i.get<int64_t>();
  EXPECT_GE(counted, 5000);
  EXPECT_LE(bins, 1023);
  // Kernels cover half of each 2 us period: bins read about 50% busy.
  EXPECT_NEAR(levels[0]["b"][10].get<double>(), 500, 30);
  // Each finer level has 4x the bins of the one above.
  EXPECT_DOUBLE_EQ(levels[0]["w"].get<double>() / levels[1]["w"].get<double>(), 4.0);
}

TEST(TimelineLod, LevelsStopAtTheBinBudget) {
  TimelineLodOptions options;
  options.max_events = 0;
  options.max_bins = 3000;
  auto j = timeline_lod(launches(20000), options);
  for (const auto& level : j["tracks"][2]["levels"]) EXPECT_LE(level["i"].size(), 3000u);
}

TEST(TimelineLod, NestingDepthsAndEmptyTimeline) {
  exporter::GpuTimeline t;
  t.nvtx_ranges.push_back({0, 100, make_tid(1, 1), true, false, "a", ""});
  t.nvtx_ranges.push_back({10, 50, make_tid(1, 1), true, false, "b", ""});
  t.nvtx_ranges.push_back({20, 30, make_tid(1, 1), true, false, "c", ""});
  t.nvtx_ranges.push_back({60, 70, make_tid(1, 1), true, false, "d", ""});
  auto j = timeline_lod(t);
  EXPECT_EQ(j["tracks"][0]["depth"], 3);
  EXPECT_EQ(j["tracks"][0]["events"]["k"], nlohmann::json({0, 4, 8, 4}));
  auto empty = timeline_lod(exporter::GpuTimeline{});
  EXPECT_TRUE(empty["tracks"].empty());
  EXPECT_EQ(empty["span"], 1);
}

}  // namespace
}  // namespace strata::html
