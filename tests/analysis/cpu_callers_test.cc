#include "analysis/cpu_callers.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

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

void add(Profile& p, int count, std::initializer_list<const char*> leaf_first) {
  std::vector<FrameId> stack;
  for (const char* f : leaf_first) stack.push_back(fn(p, f));
  for (int i = 0; i < count; ++i) p.samples.push_back({1, 1, i * kMs, kMs, stack});
}

// The edge caller -> callee, by function name; fails the test when absent.
const CpuEdge& edge(const Profile& p, const std::vector<CpuEdge>& edges, const char* caller,
                    const char* callee) {
  FunctionIndex index = index_functions(p.frames);
  for (const CpuEdge& e : edges) {
    if (index.functions[e.caller].name == caller && index.functions[e.callee].name == callee) {
      return e;
    }
  }
  ADD_FAILURE() << "no edge " << caller << " -> " << callee;
  static const CpuEdge none;
  return none;
}

TEST(CpuCallers, SampledEdgesSplitSelfTimeByCallerAndCountRecursionOnce) {
  Profile p;
  p.rate_hz = 1000;
  add(p, 3, {"work", "main"});
  add(p, 2, {"work", "loop", "main"});
  add(p, 1, {"loop", "main"});
  // work -> work -> main: the work->work edge is in the stack once, the
  // main->work edge once; the sample is work's self time via work.
  add(p, 4, {"work", "work", "main"});
  auto edges = cpu_call_edges(p, {});
  EXPECT_EQ(edges.size(), 4u);
  const CpuEdge& main_work = edge(p, edges, "main", "work");
  EXPECT_EQ(main_work.ncalls, 3u);  // work as leaf directly under main
  EXPECT_NEAR(main_work.tottime_s, 0.003, 1e-12);
  EXPECT_NEAR(main_work.cumtime_s, 0.007, 1e-12);  // 3 + 4 samples hold main -> work
  const CpuEdge& loop_work = edge(p, edges, "loop", "work");
  EXPECT_EQ(loop_work.ncalls, 2u);
  EXPECT_NEAR(loop_work.cumtime_s, 0.002, 1e-12);
  const CpuEdge& work_work = edge(p, edges, "work", "work");
  EXPECT_EQ(work_work.ncalls, 4u);
  EXPECT_NEAR(work_work.cumtime_s, 0.004, 1e-12);
  const CpuEdge& main_loop = edge(p, edges, "main", "loop");
  EXPECT_EQ(main_loop.ncalls, 1u);
  EXPECT_NEAR(main_loop.tottime_s, 0.001, 1e-12);
  EXPECT_NEAR(main_loop.cumtime_s, 0.003, 1e-12);
}

TEST(CpuCallers, SampledEdgesOfAThreadFilter) {
  Profile p;
  p.rate_hz = 1000;
  add(p, 2, {"work", "main"});
  p.samples.back().tid = 2;
  EXPECT_EQ(edge(p, cpu_call_edges(p, {2}), "main", "work").ncalls, 1u);
  EXPECT_TRUE(cpu_call_edges(p, {3}).empty());
}

// main(0..100) calls fact(10..60), which recurses twice; then calls leaf.
TEST(CpuCallers, InstrumentedEdgesCountCallsAndPrimitiveCallsAsCProfile) {
  Profile p;
  p.mode = ProfileMode::kInstrumented;
  FrameId main = fn(p, "main");
  FrameId fact = fn(p, "fact");
  FrameId leaf = fn(p, "leaf");
  auto at = [](int64_t ms) { return ms * kMs; };
  p.calls.push_back({7,
                     7,
                     {{at(0), main, CallKind::kEnter},
                      {at(10), fact, CallKind::kEnter},
                      {at(20), fact, CallKind::kEnter},
                      {at(30), fact, CallKind::kEnter},
                      {at(40), fact, CallKind::kExit},
                      {at(50), fact, CallKind::kExit},
                      {at(60), fact, CallKind::kExit},
                      {at(70), leaf, CallKind::kEnter},
                      {at(75), leaf, CallKind::kExit},
                      {at(100), main, CallKind::kExit}}});
  auto edges = cpu_call_edges(p, {});
  EXPECT_EQ(edges.size(), 3u);  // main has no caller: it is not an edge
  const CpuEdge& main_fact = edge(p, edges, "main", "fact");
  EXPECT_EQ(main_fact.ncalls, 1u);
  EXPECT_EQ(main_fact.primitive_calls, 1u);
  EXPECT_NEAR(main_fact.tottime_s, 0.020, 1e-12);  // 10..20 and 50..60
  EXPECT_NEAR(main_fact.cumtime_s, 0.050, 1e-12);
  const CpuEdge& fact_fact = edge(p, edges, "fact", "fact");
  EXPECT_EQ(fact_fact.ncalls, 2u);
  EXPECT_EQ(fact_fact.primitive_calls, 0u);  // recursive calls add no cumtime
  EXPECT_NEAR(fact_fact.tottime_s, 0.030, 1e-12);
  EXPECT_NEAR(fact_fact.cumtime_s, 0, 1e-12);
  const CpuEdge& main_leaf = edge(p, edges, "main", "leaf");
  EXPECT_EQ(main_leaf.ncalls, 1u);
  EXPECT_NEAR(main_leaf.cumtime_s, 0.005, 1e-12);
}

}  // namespace
}  // namespace strata::analysis
