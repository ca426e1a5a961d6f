#include "analysis/cpu_profile.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

CallEvent enter(int64_t t, FrameId f) {
  return {t, f, CallKind::kEnter};
}
CallEvent leave(int64_t t, FrameId f) {
  return {t, f, CallKind::kExit};
}

TEST(FrameTable, InternsEqualFramesOnce) {
  FrameTable t;
  FrameId a = t.intern({"f", "f.cc", 3, "/bin/x", 0x10, false});
  FrameId b = t.intern({"g", "g.cc", 5, "/bin/x", 0x20, false});
  EXPECT_EQ(t.intern({"f", "f.cc", 3, "/bin/x", 0x10, false}), a);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at(b).function, "g");
}

TEST(FunctionIndex, MergesFramesOfOneFunctionAndLabelsLikePstats) {
  FrameTable t;
  t.intern({"f", "src/f.cc", 3, "/bin/x", 0x10, false});
  t.intern({"f", "src/f.cc", 3, "/bin/x", 0x18, false});  // another address in f
  t.intern({"memcpy", "", 0, "/lib/libc.so.6", 0x99, false});
  t.intern({"", "", 0, "/lib/libc.so.6", 0xab, false});
  t.intern({"exec", "", 0, "", 0, false});
  t.intern({"", "", 0, "", 0, false});
  FunctionIndex idx = index_functions(t);
  ASSERT_EQ(idx.functions.size(), 5u);
  EXPECT_EQ(idx.of_frame[0], idx.of_frame[1]);
  EXPECT_EQ(idx.functions[0].label, "src/f.cc:3(f)");
  EXPECT_EQ(idx.functions[1].label, "libc.so.6:0(memcpy)");
  EXPECT_EQ(idx.functions[2].label, "libc.so.6:0(libc.so.6+0xab)");
  EXPECT_EQ(idx.functions[3].label, "{exec}");
  EXPECT_EQ(idx.functions[4].label, "{[unknown]}");
}

TEST(SampleWeight, FallsBackToTheNominalPeriod) {
  Profile p;
  p.rate_hz = 1000;
  Sample s;
  EXPECT_EQ(sample_weight_ns(p, s), 1000000);
  s.weight_ns = 250;
  EXPECT_EQ(sample_weight_ns(p, s), 250);
}

TEST(BalanceEvents, ClosesFramesOpenAtTheEndAtTheLastTimestamp) {
  // main -> a (returns) -> b -> c (returns), then the thread died inside b.
  BalancedCalls b = balance_events(
      {enter(0, 0), enter(10, 1), leave(20, 1), enter(30, 2), enter(40, 3), leave(70, 3)});
  EXPECT_EQ(b.closed_at_end, 2u);
  ASSERT_EQ(b.events.size(), 8u);
  EXPECT_EQ(b.events[6].frame, 2u);
  EXPECT_EQ(b.events[6].time_ns, 70);
  EXPECT_EQ(b.events[7].frame, 0u);
  EXPECT_EQ(b.events[7].kind, CallKind::kExit);
}

TEST(BalanceEvents, RepairsSkippedExitsStrayExitsAndBackwardTimes) {
  BalancedCalls b = balance_events({leave(0, 9),  // began inside frame 9
                                    enter(5, 0), enter(6, 1), enter(7, 2),
                                    leave(4, 0)});  // longjmp out of 1 and 2, clock went back
  EXPECT_EQ(b.unmatched_exits, 1u);
  EXPECT_EQ(b.closed_by_outer_exit, 2u);
  EXPECT_EQ(b.reordered_times, 1u);
  ASSERT_EQ(b.events.size(), 6u);
  std::vector<FrameId> order;
  for (const auto& e : b.events) {
    if (e.kind == CallKind::kExit) order.push_back(e.frame);
    EXPECT_GE(e.time_ns, 5);
  }
  EXPECT_EQ(order, (std::vector<FrameId>{2, 1, 0}));
}

}  // namespace
}  // namespace strata::analysis
