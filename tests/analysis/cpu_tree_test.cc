#include "analysis/cpu_tree.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

const CallTreeNode* child(const CallTree& t, const CallTreeNode& n, const std::string& name) {
  for (uint32_t c : n.children) {
    if (t.nodes[c].name == name) return &t.nodes[c];
  }
  return nullptr;
}

FrameId named(Profile& p, const std::string& name) {
  Frame f;
  f.function = name;
  return p.frames.intern(f);
}

TEST(CallTree, MergesSampledStacksRootFirst) {
  Profile p;
  FrameId a = named(p, "a");
  FrameId b = named(p, "b");
  FrameId c = named(p, "c");
  p.samples.push_back({1, 1, 0, 5, {c, b, a}});
  p.samples.push_back({1, 1, 0, 5, {c, b, a}});
  p.samples.push_back({1, 1, 0, 5, {a}});
  p.samples.push_back({1, 1, 0, 5, {c, a}});
  CallTree t = build_call_tree(p, {});
  EXPECT_EQ(t.unit, "samples");
  EXPECT_EQ(t.nodes[0].total, 4u);
  const CallTreeNode* na = child(t, t.nodes[0], "a");
  ASSERT_NE(na, nullptr);
  EXPECT_EQ(na->total, 4u);
  EXPECT_EQ(na->self, 1u);
  ASSERT_EQ(na->children.size(), 2u);
  EXPECT_EQ(t.nodes[na->children[0]].name, "b");  // children by name
  EXPECT_EQ(child(t, *child(t, *na, "b"), "c")->self, 2u);

  CallTreeOptions o;
  o.weight = TreeWeight::kTime;
  EXPECT_EQ(build_call_tree(p, o).nodes[0].total, 20u);
}

TEST(CallTree, ThreadRootsAndInstrumentedTime) {
  Profile p;
  p.mode = ProfileMode::kInstrumented;
  p.threads = {{4, 4, "main"}};
  FrameId m = named(p, "main");
  FrameId f = named(p, "f");
  p.calls.push_back({4,
                     4,
                     {{0, m, CallKind::kEnter},
                      {10, f, CallKind::kEnter},
                      {30, f, CallKind::kExit},
                      {40, m, CallKind::kExit}}});
  CallTreeOptions o;
  o.thread_roots = true;
  CallTree t = build_call_tree(p, o);
  EXPECT_EQ(t.unit, "ns");
  EXPECT_EQ(t.nodes[0].total, 40u);
  const CallTreeNode* th = child(t, t.nodes[0], "main (tid 4)");
  ASSERT_NE(th, nullptr);
  EXPECT_EQ(th->total, 40u);
  const CallTreeNode* nm = child(t, *th, "main");
  EXPECT_EQ(nm->self, 20u);
  EXPECT_EQ(child(t, *nm, "f")->total, 20u);
}

}  // namespace
}  // namespace strata::analysis
