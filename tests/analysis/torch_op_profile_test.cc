// op_tree_profile: PyTorch ops into balanced enter/exit events per thread.
#include "analysis/torch_op_profile.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::analysis {
namespace {

OpSpan op(int32_t tid, int64_t start, int64_t end, std::string name) {
  return OpSpan{7, tid, start, end, std::move(name)};
}

// "name@time+" / "name@time-" per event, in order.
std::vector<std::string> events_of(const Profile& p, size_t thread) {
  std::vector<std::string> out;
  for (const auto& e : p.calls.at(thread).events) {
    out.push_back(p.frames.at(e.frame).function + "@" + std::to_string(e.time_ns) +
                  (e.kind == CallKind::kEnter ? "+" : "-"));
  }
  return out;
}

TEST(OpTreeProfile, NestedOpsBecomeBalancedCallsPerThread) {
  // Given out of order, on two threads.
  Profile p = op_tree_profile({op(2, 50, 60, "backward"), op(1, 20, 30, "aten::mm"),
                               op(1, 10, 100, "aten::linear"), op(1, 40, 90, "aten::add"),
                               op(1, 200, 210, "aten::relu")});
  EXPECT_EQ(p.mode, ProfileMode::kInstrumented);
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].tid, 1);
  EXPECT_EQ(p.calls[0].pid, 7);
  EXPECT_EQ(events_of(p, 0),
            (std::vector<std::string>{"aten::linear@10+", "aten::mm@20+", "aten::mm@30-",
                                      "aten::add@40+", "aten::add@90-", "aten::linear@100-",
                                      "aten::relu@200+", "aten::relu@210-"}));
  EXPECT_EQ(events_of(p, 1), (std::vector<std::string>{"backward@50+", "backward@60-"}));
  EXPECT_EQ(p.frames.at(p.calls[0].events[0].frame).module, "[pytorch]");
  EXPECT_EQ(p.wall_ns, 200);
}

// A child that outlives its parent by a rounding error is cut at the
// parent's end; an op starting exactly where another ended is its sibling.
TEST(OpTreeProfile, OverhangingChildIsCutAtItsParentsEnd) {
  Profile p = op_tree_profile({op(1, 0, 100, "outer"), op(1, 50, 101, "inner"),
                               op(1, 100, 120, "next")});
  EXPECT_EQ(events_of(p, 0),
            (std::vector<std::string>{"outer@0+", "inner@50+", "inner@100-", "outer@100-",
                                      "next@100+", "next@120-"}));
  auto balanced = balance_events(p.calls[0].events);
  EXPECT_EQ(balanced.events.size(), p.calls[0].events.size());
}

TEST(OpTreeProfile, NoOpsNoThreads) {
  Profile p = op_tree_profile({});
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.wall_ns, 0);
}

}  // namespace
}  // namespace strata::analysis
