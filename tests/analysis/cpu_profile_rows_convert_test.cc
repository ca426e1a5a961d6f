#include "analysis/cpu_profile_rows_convert.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

Profile sampled_profile() {
  Profile p;
  p.mode = ProfileMode::kInProcess;
  p.rate_hz = 250;
  p.wall_ns = 9'000;
  p.cpu_ns = 7'000;
  p.lost_samples = 3;
  p.throttles = 1;
  FrameId leaf = p.frames.intern({"leaf", "a.cc", 10, "/bin/a", 0x10, false});
  FrameId inl = p.frames.intern({"inlined", "a.h", 4, "/bin/a", 0x10, true});
  FrameId py = p.frames.intern({"work", "app.py", 3, "[perf-9.map]", 0, false});
  FrameId raw = p.frames.intern({"", "", 0, "/lib/x.so", 0x1234, false});
  p.samples.push_back({9, 9, 100, 4'000'000, {leaf, inl, py}});
  p.samples.push_back({10, 9, 200, 0, {leaf, inl, py}});  // weight 0: the nominal period
  p.samples.push_back({10, 9, 300, 4'000'000, {raw}});
  p.samples.push_back({10, 9, 400, 4'000'000, {}});
  p.threads = {{9, 9, "main"}, {10, 9, "worker"}};
  p.processes = {{9, "prog --flag"}};
  return p;
}

TEST(CpuProfileRows, SampledProfileToRows) {
  store::CpuProfileRows rows = to_rows(sampled_profile());
  EXPECT_EQ(rows.source, "sigprof");
  EXPECT_EQ(rows.rate_hz, 250);
  EXPECT_EQ(rows.lost_samples, 3u);
  ASSERT_EQ(rows.frames.size(), 4u);
  EXPECT_EQ(rows.frames[0].kind, "native");
  EXPECT_EQ(rows.frames[2].kind, "python");
  EXPECT_TRUE(rows.frames[1].inlined);
  EXPECT_EQ(rows.frames[3].module_offset, 0x1234u);
  ASSERT_EQ(rows.stacks.size(), 2u);  // equal stacks stored once
  EXPECT_EQ(rows.stacks[0], (std::vector<int64_t>{0, 1, 2}));
  ASSERT_EQ(rows.samples.size(), 4u);
  EXPECT_EQ(rows.samples[0].stack, 0);
  EXPECT_EQ(rows.samples[1].stack, 0);
  EXPECT_EQ(rows.samples[1].weight_ns, 4'000'000);  // 1e9 / 250 Hz
  EXPECT_EQ(rows.samples[2].stack, 1);
  EXPECT_EQ(rows.samples[3].stack, -1);
  ASSERT_EQ(rows.threads.size(), 2u);
  EXPECT_EQ(rows.threads[1].name, "worker");
  ASSERT_EQ(rows.processes.size(), 1u);
  EXPECT_EQ(rows.processes[0].second, "prog --flag");
}

TEST(CpuProfileRows, SampledProfileRoundTrips) {
  Profile before = sampled_profile();
  Profile after = from_rows(to_rows(before));
  EXPECT_EQ(after.mode, before.mode);
  EXPECT_EQ(after.rate_hz, before.rate_hz);
  EXPECT_EQ(after.wall_ns, before.wall_ns);
  EXPECT_EQ(after.cpu_ns, before.cpu_ns);
  EXPECT_EQ(after.lost_samples, before.lost_samples);
  EXPECT_EQ(after.throttles, before.throttles);
  EXPECT_EQ(after.frames.frames(), before.frames.frames());
  ASSERT_EQ(after.samples.size(), before.samples.size());
  for (size_t i = 0; i < before.samples.size(); ++i) {
    EXPECT_EQ(after.samples[i].tid, before.samples[i].tid);
    EXPECT_EQ(after.samples[i].pid, before.samples[i].pid);
    EXPECT_EQ(after.samples[i].time_ns, before.samples[i].time_ns);
    EXPECT_EQ(after.samples[i].weight_ns, sample_weight_ns(before, before.samples[i]));
    EXPECT_EQ(after.samples[i].stack, before.samples[i].stack);
  }
  ASSERT_EQ(after.threads.size(), 2u);
  EXPECT_EQ(after.threads[1].tid, 10);
  EXPECT_EQ(after.threads[1].pid, 9);
  EXPECT_EQ(after.threads[1].name, "worker");
  ASSERT_EQ(after.processes.size(), 1u);
  EXPECT_EQ(after.processes[0].pid, 9);
  EXPECT_EQ(after.processes[0].command, "prog --flag");
}

TEST(CpuProfileRows, InstrumentedCallsRoundTripPerThread) {
  Profile before;
  before.mode = ProfileMode::kInstrumented;
  FrameId f = before.frames.intern({"f", "f.cc", 1, "/bin/p", 0x1, false});
  FrameId g = before.frames.intern({"g", "g.cc", 2, "/bin/p", 0x2, false});
  before.calls.push_back({1, 1, {{10, f, CallKind::kEnter}, {20, f, CallKind::kExit}}});
  before.calls.push_back({2, 1, {{15, g, CallKind::kEnter}}});  // left open
  store::CpuProfileRows rows = to_rows(before);
  EXPECT_EQ(rows.source, "instrumented");
  ASSERT_EQ(rows.calls.size(), 3u);
  EXPECT_TRUE(rows.calls[1].exit);

  Profile after = from_rows(rows);
  EXPECT_EQ(after.mode, ProfileMode::kInstrumented);
  ASSERT_EQ(after.calls.size(), 2u);
  EXPECT_EQ(after.calls[0].tid, 1);
  ASSERT_EQ(after.calls[0].events.size(), 2u);
  EXPECT_EQ(after.calls[0].events[1].time_ns, 20);
  EXPECT_EQ(after.calls[0].events[1].kind, CallKind::kExit);
  EXPECT_EQ(after.frames.at(after.calls[1].events[0].frame).function, "g");
}

TEST(CpuProfileRows, UnknownSourceReadsAsPerfEvent) {
  store::CpuProfileRows rows;
  rows.source = "perf_event";
  EXPECT_EQ(from_rows(rows).mode, ProfileMode::kPerfEvent);
  EXPECT_EQ(to_rows(Profile{}).source, "perf_event");
}

}  // namespace
}  // namespace strata::analysis
