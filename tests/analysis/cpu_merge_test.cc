#include "analysis/cpu_merge.h"

#include <gtest/gtest.h>

#include "analysis/cpu_pstats.h"

namespace strata::analysis {
namespace {

constexpr int64_t kMs = 1000000;

FrameId fn(Profile& p, const std::string& name) {
  Frame f;
  f.function = name;
  f.file = name + ".py";
  f.line = 1;
  return p.frames.intern(f);
}

Profile sampled(double rate_hz, std::vector<std::string> leaf_first, int count, int32_t tid) {
  Profile p;
  p.rate_hz = rate_hz;
  p.wall_ns = 100 * kMs;
  p.cpu_ns = 50 * kMs;
  p.lost_samples = 1;
  p.threads = {{tid, tid, "main"}};
  p.processes = {{tid, "python3 prog.py"}};
  std::vector<FrameId> stack;
  for (const auto& f : leaf_first) stack.push_back(fn(p, f));
  for (int i = 0; i < count; ++i) p.samples.push_back({tid, tid, i * kMs, 0, stack});
  return p;
}

double tottime(const Profile& p, const std::string& label) {
  auto t = cpu_function_table(p, {});
  for (const auto& r : t->rows) {
    if (r.label == label) return r.tottime_s;
  }
  ADD_FAILURE() << "no row " << label;
  return -1;
}

TEST(CpuMerge, AddsSamplesOfSharedAndSeparateFunctionsKeepingEachPeriod) {
  // a: "work" under "main" at 1 kHz (1 ms a sample); b: "work" and "other" at 4 kHz.
  Profile a = sampled(1000, {"work", "main"}, 3, 10);
  Profile b = sampled(4000, {"work", "main"}, 4, 20);
  Profile c = sampled(4000, {"other", "main"}, 2, 20);
  auto merged = merge_profiles({a, b, c});
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->samples.size(), 9u);
  EXPECT_EQ(merged->frames.size(), 3u);  // main, work, other: shared frames interned once
  EXPECT_NEAR(tottime(*merged, "work.py:1(work)"), 0.003 + 0.001, 1e-12);
  EXPECT_NEAR(tottime(*merged, "other.py:1(other)"), 0.0005, 1e-12);
  EXPECT_EQ(merged->rate_hz, 1000);
  EXPECT_EQ(merged->wall_ns, 300 * kMs);
  EXPECT_EQ(merged->cpu_ns, 150 * kMs);
  EXPECT_EQ(merged->lost_samples, 3u);
  EXPECT_EQ(merged->threads.size(), 2u);  // tid 20 named once
  EXPECT_EQ(merged->processes.size(), 2u);
}

TEST(CpuMerge, TheSameProfileTwiceDoublesEveryCount) {
  Profile a = sampled(1000, {"work", "main"}, 3, 10);
  auto merged = merge_profiles({a, a});
  ASSERT_TRUE(merged);
  auto one = cpu_function_table(a, {});
  auto two = cpu_function_table(*merged, {});
  ASSERT_EQ(one->rows.size(), two->rows.size());
  for (size_t i = 0; i < one->rows.size(); ++i) {
    EXPECT_EQ(two->rows[i].label, one->rows[i].label);
    EXPECT_EQ(two->rows[i].ncalls, 2 * one->rows[i].ncalls);
    EXPECT_NEAR(two->rows[i].cumtime_s, 2 * one->rows[i].cumtime_s, 1e-12);
  }
}

TEST(CpuMerge, RefusesSampledWithInstrumentedAndNothing) {
  Profile a = sampled(1000, {"work"}, 1, 1);
  Profile b;
  b.mode = ProfileMode::kInstrumented;
  auto merged = merge_profiles({a, b});
  ASSERT_FALSE(merged);
  EXPECT_NE(merged.error().message.find("sampled CPU profile with an instrumented one"),
            std::string::npos);
  EXPECT_FALSE(merge_profiles({}));
}

TEST(CpuMerge, InstrumentedCallsKeepTheirFramesRemapped) {
  Profile a;
  a.mode = ProfileMode::kInstrumented;
  FrameId fa = fn(a, "alpha");
  a.calls.push_back({1, 1, {{0, fa, CallKind::kEnter}, {5 * kMs, fa, CallKind::kExit}}});
  Profile b;
  b.mode = ProfileMode::kInstrumented;
  fn(b, "unused");
  FrameId fb = fn(b, "alpha");  // id 1 here, id 0 once merged
  b.calls.push_back({2, 2, {{0, fb, CallKind::kEnter}, {7 * kMs, fb, CallKind::kExit}}});
  auto merged = merge_profiles({a, b});
  ASSERT_TRUE(merged);
  auto t = cpu_function_table(*merged, {});
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0].ncalls, 2u);
  EXPECT_NEAR(t->rows[0].tottime_s, 0.012, 1e-12);
}

}  // namespace
}  // namespace strata::analysis
