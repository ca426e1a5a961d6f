#include "analysis/cpu_pstats.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace strata::analysis {
namespace {

constexpr int64_t kMs = 1000000;

FrameId fn(Profile& p, const std::string& name) {
  Frame f;
  f.function = name;
  f.file = name + ".cc";
  f.line = 1;
  return p.frames.intern(f);
}

// Adds `count` samples of a stack given leaf first, 1 ms each.
void add(Profile& p, int count, std::initializer_list<const char*> leaf_first, int32_t tid = 1) {
  std::vector<FrameId> stack;
  for (const char* f : leaf_first) stack.push_back(fn(p, f));
  for (int i = 0; i < count; ++i) p.samples.push_back({tid, 1, i * kMs, kMs, stack});
}

Profile sampled() {
  Profile p;
  p.mode = ProfileMode::kPerfEvent;
  p.rate_hz = 1000;
  add(p, 3, {"c", "b", "a"});
  add(p, 1, {"b", "a"});
  add(p, 1, {"a"});
  return p;
}

const CpuRow& row(const CpuTable& t, const std::string& label, int32_t tid = -1) {
  for (const auto& r : t.rows) {
    if (r.label == label && r.tid == tid) return r;
  }
  static CpuRow none;
  ADD_FAILURE() << "no row " << label;
  return none;
}

std::vector<std::string> labels(const CpuTable& t) {
  std::vector<std::string> out;
  for (const auto& r : t.rows) out.push_back(r.label);
  return out;
}

TEST(CpuPstats, SampledSelfAndCumulative) {
  auto t = cpu_function_table(sampled(), {});
  ASSERT_TRUE(t);
  ASSERT_EQ(t->rows.size(), 3u);
  const CpuRow& a = row(*t, "a.cc:1(a)");
  EXPECT_EQ(a.ncalls, 1u);  // samples with a as leaf
  EXPECT_EQ(a.cum_samples, 5u);
  EXPECT_DOUBLE_EQ(a.tottime_s, 0.001);
  EXPECT_DOUBLE_EQ(a.cumtime_s, 0.005);
  EXPECT_DOUBLE_EQ(*a.tottime_percall_s, 0.001);
  EXPECT_DOUBLE_EQ(*a.cumtime_percall_s, 0.001);
  const CpuRow& c = row(*t, "c.cc:1(c)");
  EXPECT_EQ(c.ncalls, 3u);
  EXPECT_DOUBLE_EQ(c.tottime_s, 0.003);
  EXPECT_DOUBLE_EQ(c.cumtime_s, 0.003);
  // Default sort: cumtime descending.
  EXPECT_EQ(labels(*t), (std::vector<std::string>{"a.cc:1(a)", "b.cc:1(b)", "c.cc:1(c)"}));
}

TEST(CpuPstats, FunctionWithoutSelfSamplesHasBlankTottimePercall) {
  Profile p;
  add(p, 2, {"leaf", "main"});
  auto t = cpu_function_table(p, {});
  const CpuRow& m = row(*t, "main.cc:1(main)");
  EXPECT_EQ(m.ncalls, 0u);
  EXPECT_FALSE(m.tottime_percall_s);
  EXPECT_DOUBLE_EQ(*m.cumtime_percall_s, 0.001);
}

TEST(CpuPstats, RecursionCountsOncePerSampleInCumtime) {
  Profile p;
  add(p, 2, {"fib", "fib", "fib", "main"});
  add(p, 1, {"main"});
  auto t = cpu_function_table(p, {});
  const CpuRow& fib = row(*t, "fib.cc:1(fib)");
  EXPECT_EQ(fib.cum_samples, 2u);
  EXPECT_DOUBLE_EQ(fib.cumtime_s, 0.002);
  EXPECT_DOUBLE_EQ(fib.tottime_s, 0.002);
  EXPECT_DOUBLE_EQ(row(*t, "main.cc:1(main)").cumtime_s, 0.003);
}

TEST(CpuPstats, FramesOfOneFunctionMergeIntoOneRow) {
  Profile p;
  FrameId f1 = p.frames.intern({"f", "f.cc", 7, "/bin/x", 0x10, false});
  FrameId f2 = p.frames.intern({"f", "f.cc", 7, "/bin/x", 0x20, false});
  p.samples.push_back({1, 1, 0, kMs, {f1, f2}});  // f calls itself from another address
  auto t = cpu_function_table(p, {});
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0].cum_samples, 1u);
  EXPECT_EQ(t->rows[0].self_samples, 1u);
}

// main [0, 100] -> fact [10, 60] -> fact [20, 50] -> fact [30, 40], in ms.
Profile instrumented_recursion() {
  Profile p;
  p.mode = ProfileMode::kInstrumented;
  FrameId main = fn(p, "main");
  FrameId fact = fn(p, "fact");
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
                      {at(100), main, CallKind::kExit}}});
  return p;
}

TEST(CpuPstats, InstrumentedRecursionSplitsPrimitiveCalls) {
  Profile p = instrumented_recursion();
  auto t = cpu_function_table(p, {});
  const CpuRow& fact = row(*t, "fact.cc:1(fact)");
  EXPECT_EQ(fact.ncalls, 3u);
  EXPECT_EQ(fact.primitive_calls, 1u);
  EXPECT_NEAR(fact.tottime_s, 0.050, 1e-12);  // 10 + 20 + 20 ms of self time
  EXPECT_NEAR(fact.cumtime_s, 0.050, 1e-12);  // the outermost call only
  EXPECT_NEAR(*fact.tottime_percall_s, 0.050 / 3, 1e-12);
  EXPECT_NEAR(*fact.cumtime_percall_s, 0.050, 1e-12);
  const CpuRow& main = row(*t, "main.cc:1(main)");
  EXPECT_EQ(main.ncalls, 1u);
  EXPECT_NEAR(main.tottime_s, 0.050, 1e-12);
  EXPECT_NEAR(main.cumtime_s, 0.100, 1e-12);

  CpuHeader h = cpu_header(p);
  EXPECT_EQ(h.function_calls, 4u);
  EXPECT_EQ(h.primitive_calls, 2u);
  EXPECT_NEAR(h.profiled_s, 0.100, 1e-12);
  EXPECT_EQ(h.threads, 1u);
}

TEST(CpuPstats, InstrumentedMutualRecursionIsRecursiveToo) {
  Profile p;
  p.mode = ProfileMode::kInstrumented;
  FrameId a = fn(p, "a");
  FrameId b = fn(p, "b");
  p.calls.push_back({1,
                     1,
                     {{0, a, CallKind::kEnter},
                      {1, b, CallKind::kEnter},
                      {2, a, CallKind::kEnter},
                      {3, a, CallKind::kExit},
                      {4, b, CallKind::kExit},
                      {5, a, CallKind::kExit}}});
  auto t = cpu_function_table(p, {});
  EXPECT_EQ(row(*t, "a.cc:1(a)").ncalls, 2u);
  EXPECT_EQ(row(*t, "a.cc:1(a)").primitive_calls, 1u);
  EXPECT_EQ(row(*t, "b.cc:1(b)").primitive_calls, 1u);
}

TEST(CpuPstats, UnbalancedEventsAtACrashAreClosedAndCounted) {
  Profile p;
  p.mode = ProfileMode::kInstrumented;
  FrameId main = fn(p, "main");
  FrameId a = fn(p, "a");
  FrameId b = fn(p, "b");
  FrameId c = fn(p, "c");
  // main -> a returns -> b -> c returns at 70, then the process crashed.
  p.calls.push_back({1,
                     1,
                     {{0, main, CallKind::kEnter},
                      {10, a, CallKind::kEnter},
                      {20, a, CallKind::kExit},
                      {30, b, CallKind::kEnter},
                      {40, c, CallKind::kEnter},
                      {70, c, CallKind::kExit}}});
  auto t = cpu_function_table(p, {});
  EXPECT_NEAR(row(*t, "b.cc:1(b)").cumtime_s, 40e-9, 1e-15);
  EXPECT_NEAR(row(*t, "b.cc:1(b)").tottime_s, 10e-9, 1e-15);
  EXPECT_NEAR(row(*t, "main.cc:1(main)").cumtime_s, 70e-9, 1e-15);
  EXPECT_NEAR(row(*t, "main.cc:1(main)").tottime_s, 20e-9, 1e-15);
  CpuHeader h = cpu_header(p);
  EXPECT_EQ(h.frames_closed_at_end, 2u);
  EXPECT_EQ(h.function_calls, 4u);
}

Profile four_functions() {
  Profile p;
  add(p, 3, {"delta"});
  add(p, 3, {"alpha"});
  add(p, 1, {"charlie", "bravo"});
  add(p, 2, {"bravo"});
  return p;
}

TEST(CpuPstats, SortsByEachKeyWithTiesByName) {
  Profile p = four_functions();
  auto by = [&](CpuSort s) {
    CpuTableOptions o;
    o.sort = {s};
    return labels(*cpu_function_table(p, o));
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(by(CpuSort::kTottime), (V{"alpha.cc:1(alpha)", "delta.cc:1(delta)", "bravo.cc:1(bravo)",
                                      "charlie.cc:1(charlie)"}));
  EXPECT_EQ(by(CpuSort::kCumtime), (V{"alpha.cc:1(alpha)", "bravo.cc:1(bravo)", "delta.cc:1(delta)",
                                      "charlie.cc:1(charlie)"}));
  EXPECT_EQ(by(CpuSort::kName), (V{"alpha.cc:1(alpha)", "bravo.cc:1(bravo)",
                                   "charlie.cc:1(charlie)", "delta.cc:1(delta)"}));
  EXPECT_EQ(by(CpuSort::kNcalls), by(CpuSort::kTottime));  // every sample weighs 1 ms
  EXPECT_EQ(by(CpuSort::kSamples), by(CpuSort::kCumtime));
}

TEST(CpuPstats, FilterThenLimit) {
  CpuTableOptions o;
  o.sort = {CpuSort::kName};
  o.filter = "(alpha|charlie|delta)\\)$";
  o.limit = 2;
  auto t = cpu_function_table(four_functions(), o);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->total_rows, 4u);
  EXPECT_EQ(t->filtered_rows, 3u);
  EXPECT_EQ(labels(*t), (std::vector<std::string>{"alpha.cc:1(alpha)", "charlie.cc:1(charlie)"}));
}

TEST(CpuPstats, InvalidFilterIsAnErrorNamingIt) {
  CpuTableOptions o;
  o.filter = "(unclosed";
  auto t = cpu_function_table(four_functions(), o);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("--filter regex '(unclosed'"), std::string::npos);
}

// pstats sorts by each key in turn: name and file ascending, counts and
// times descending; "nfl" is name, then file, then line.
TEST(CpuPstats, SortsBySeveralKeysInTurn) {
  Profile p;
  auto at = [&](const char* name, const char* file, int line) {
    Frame f;
    f.function = name;
    f.file = file;
    f.line = line;
    return p.frames.intern(f);
  };
  FrameId b_file2 = at("beta", "b.py", 9);
  FrameId b_file1 = at("beta", "a.py", 20);
  FrameId a_file2 = at("alpha", "b.py", 3);
  FrameId b_file1_early = at("beta", "a.py", 4);
  auto sample = [&](FrameId f, int n) {
    for (int i = 0; i < n; ++i) p.samples.push_back({1, 1, i * kMs, kMs, {f}});
  };
  sample(b_file2, 2);
  sample(b_file1, 2);
  sample(a_file2, 1);
  sample(b_file1_early, 3);
  auto by = [&](const char* keys) {
    CpuTableOptions o;
    o.sort = *parse_cpu_sort(keys);
    return labels(*cpu_function_table(p, o));
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(by("nfl"), (V{"b.py:3(alpha)", "a.py:4(beta)", "a.py:20(beta)", "b.py:9(beta)"}));
  EXPECT_EQ(by("file,time"), (V{"a.py:4(beta)", "a.py:20(beta)", "b.py:9(beta)", "b.py:3(alpha)"}));
  EXPECT_EQ(by("name,calls"),
            (V{"b.py:3(alpha)", "a.py:4(beta)", "a.py:20(beta)", "b.py:9(beta)"}));
  EXPECT_EQ(by("line"), (V{"b.py:3(alpha)", "a.py:4(beta)", "b.py:9(beta)", "a.py:20(beta)"}));
  // stdname compares the labels as text: "a.py:20" before "a.py:4".
  EXPECT_EQ(by("stdname"), (V{"a.py:20(beta)", "a.py:4(beta)", "b.py:3(alpha)", "b.py:9(beta)"}));
  EXPECT_EQ(by("pcalls"), by("calls"));  // sampled: every sample is a primitive call
}

Profile two_threads() {
  Profile p;
  p.threads = {{1, 1, "main"}, {2, 1, "worker"}, {3, 1, "idle"}};
  p.processes = {{1, "./app"}};
  add(p, 3, {"work", "main"}, 2);
  add(p, 1, {"main"}, 1);
  return p;
}

TEST(CpuPstats, PerThreadRowsAndThreadFilter) {
  CpuTableOptions o;
  o.per_thread = true;
  auto t = cpu_function_table(two_threads(), o);
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(row(*t, "main.cc:1(main)", 2).cum_samples, 3u);
  EXPECT_EQ(row(*t, "main.cc:1(main)", 1).cum_samples, 1u);
  o.per_thread = false;
  o.tids = {1};
  t = cpu_function_table(two_threads(), o);
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0].label, "main.cc:1(main)");
}

TEST(CpuPstats, ThreadsTableHasSamplesAndShares) {
  auto rows = cpu_threads(two_threads());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "worker");
  EXPECT_EQ(rows[0].samples, 3u);
  EXPECT_DOUBLE_EQ(rows[0].share, 0.75);
  EXPECT_EQ(rows[1].name, "main");
  EXPECT_DOUBLE_EQ(rows[1].share, 0.25);
  EXPECT_EQ(rows[2].name, "idle");  // named but never sampled
  EXPECT_EQ(rows[2].samples, 0u);
  CpuHeader h = cpu_header(two_threads());
  EXPECT_EQ(h.threads, 3u);
  EXPECT_EQ(h.processes, 1u);
  EXPECT_EQ(h.samples, 4u);
}

TEST(CpuPstats, TopSelfSharesOfAllSamples) {
  auto shares = top_self_shares(four_functions(), 2);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].label, "alpha.cc:1(alpha)");
  EXPECT_DOUBLE_EQ(shares[0].share, 3.0 / 9);
  EXPECT_EQ(shares[1].label, "delta.cc:1(delta)");
  EXPECT_EQ(top_self_shares(four_functions(), 0).size(), 4u);
}

TEST(CpuPstats, HeaderCarriesSamplingHealth) {
  Profile p = sampled();
  p.lost_samples = 4;
  p.throttles = 2;
  p.wall_ns = 2 * 1000000000LL;
  p.cpu_ns = 1500000000LL;
  CpuHeader h = cpu_header(p);
  EXPECT_EQ(h.mode, ProfileMode::kPerfEvent);
  EXPECT_EQ(h.samples, 5u);
  EXPECT_EQ(h.lost_samples, 4u);
  EXPECT_EQ(h.throttles, 2u);
  EXPECT_DOUBLE_EQ(h.wall_s, 2.0);
  EXPECT_DOUBLE_EQ(h.cpu_s, 1.5);
  EXPECT_DOUBLE_EQ(h.profiled_s, 0.005);
  EXPECT_EQ(h.function_calls, 0u);
}

}  // namespace
}  // namespace strata::analysis
