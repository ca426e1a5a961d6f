// Two sides compared layer by layer: which layers are compared, what the
// wall time is compared against, and the rows each layer gives.
#include "analysis/compare.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace strata::analysis {
namespace {

constexpr int64_t kMs = 1000000;

// Adds `count` 1 ms samples of a stack given leaf first; functions are
// named NAME, in NAME.cc at `line`.
void add(Profile& p, int count, std::initializer_list<const char*> leaf_first, int line = 1) {
  std::vector<FrameId> stack;
  for (const char* name : leaf_first) {
    Frame f;
    f.function = name;
    f.file = std::string(name) + ".cc";
    f.line = line;
    stack.push_back(p.frames.intern(f));
  }
  for (int i = 0; i < count; ++i) p.samples.push_back({1, 1, i * kMs, kMs, stack});
}

Profile profile(int hot_samples, int line) {
  Profile p;
  p.rate_hz = 1000;
  add(p, hot_samples, {"hot", "main"}, line);
  add(p, 2, {"main"}, line);
  return p;
}

CompareSide bench_side(std::vector<double> wall) {
  CompareSide s;
  s.name = "x.sqlite";
  s.verb = "bench";
  s.wall_source = "bench";
  s.wall = {{"wall", "ms", std::move(wall)}};
  return s;
}

const SectionDiff* section(const Comparison& c, SectionKind kind) {
  for (const auto& s : c.sections) {
    if (s.kind == kind) return &s;
  }
  return nullptr;
}

TEST(CompareLayers, CpuFunctionsAreMatchedByFileAndNameNotLine) {
  auto rows_a = cpu_function_rows(profile(10, 1));
  auto rows_b = cpu_function_rows(profile(4, 7));  // the functions moved down 6 lines
  ASSERT_EQ(rows_a.size(), 2u);
  ASSERT_EQ(rows_b.size(), 2u);
  CompareSide a = bench_side({1});
  CompareSide b = bench_side({1});
  a.cpu = profile(10, 1);
  b.cpu = profile(4, 7);
  auto c = compare_sides(a, b);
  const SectionDiff* s = section(c, SectionKind::kCpuFunctions);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->diff.rows.size(), 2u);  // no added or removed rows
  const DiffRow& hot = s->diff.rows[0];
  EXPECT_EQ(hot.name, "hot.cc:7(hot)");  // B's label
  EXPECT_EQ(hot.change, RowChange::kBoth);
  EXPECT_EQ(hot.a, (std::vector<double>{10.0 * kMs, 10.0 * kMs}));  // self, total
  EXPECT_EQ(hot.b, (std::vector<double>{4.0 * kMs, 4.0 * kMs}));
  EXPECT_EQ(hot.count_a, 10);  // samples with hot as leaf
  const DiffRow& main = s->diff.rows[1];
  EXPECT_EQ(main.a, (std::vector<double>{2.0 * kMs, 12.0 * kMs}));
  EXPECT_FALSE(c.cpu_modes_differ);
}

// Like profile(), with the files under `dir` (a relative path from the
// build directory, which differs between builds).
Profile profile_in(const std::string& dir, int hot_samples) {
  Profile p = profile(hot_samples, 1);
  return with_changed_frames(p, [&](Frame& f) { f.file = dir + f.file; });
}

TEST(CompareLayers, AFileSeenFromAnotherBuildDirectoryIsTheSameFile) {
  CompareSide a = bench_side({1});
  CompareSide b = bench_side({1});
  a.cpu = profile_in("../../src/", 10);
  b.cpu = profile_in("../../../src/", 4);
  b.cpu->samples.push_back(b.cpu->samples.front());  // one more function, in another file
  Frame other;
  other.function = "hot";
  other.file = "../../../lib/hot.cc";
  b.cpu->samples.back().stack = {b.cpu->frames.intern(other)};
  auto c = compare_sides(a, b);
  const SectionDiff* s = section(c, SectionKind::kCpuFunctions);
  ASSERT_NE(s, nullptr);
  // hot.cc(hot) under src/ is ambiguous in B (src/ and lib/): not matched;
  // main.cc(main) is.
  std::vector<std::pair<std::string, RowChange>> rows;
  for (const auto& r : s->diff.rows) rows.emplace_back(r.name, r.change);
  EXPECT_EQ(rows, (std::vector<std::pair<std::string, RowChange>>{
                      {"../../src/hot.cc:1(hot)", RowChange::kRemoved},
                      {"../../../src/hot.cc:1(hot)", RowChange::kAdded},
                      {"../../../lib/hot.cc:0(hot)", RowChange::kAdded},
                      {"../../../src/main.cc:1(main)", RowChange::kBoth}}));

  b.cpu = profile_in("../../../src/", 4);
  c = compare_sides(a, b);
  s = section(c, SectionKind::kCpuFunctions);
  ASSERT_EQ(s->diff.rows.size(), 2u);
  EXPECT_EQ(s->diff.rows[0].name, "../../../src/hot.cc:1(hot)");
  EXPECT_EQ(s->diff.rows[0].change, RowChange::kBoth);
  EXPECT_EQ(s->diff.rows[0].count_a, 10);
}

TEST(CompareLayers, TorchOpsLeaveDeviceRowsToTheKernelSection) {
  TorchOpTable t;
  t.rows.push_back({"aten::mm", "", {}, false, false, 3, 300, 500, 40, 40});
  t.rows.push_back({"ampere_sgemm", "", {}, true, false, 3, 0, 0, 40, 40});
  auto rows = torch_op_rows(t);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "aten::mm");
  EXPECT_EQ(rows[0].values, (std::vector<double>{300, 40}));  // Self CPU, Self CUDA
  EXPECT_EQ(rows[0].count, 3);
}

TEST(CompareLayers, BenchRunsAreComparedWithBenchRunsOnly) {
  auto both = compare_sides(bench_side({10, 11, 12}), bench_side({20, 21, 22}));
  ASSERT_TRUE(both.wall);
  EXPECT_EQ(both.wall_missing, WallMissing::kNone);
  EXPECT_EQ(both.verdict.verdict, Verdict::kRegressed);
  EXPECT_FALSE(both.empty());

  CompareSide traced = bench_side({600});
  traced.verb = traced.wall_source = "trace";
  auto apart = compare_sides(bench_side({10, 11, 12}), traced);
  EXPECT_FALSE(apart.wall);
  EXPECT_EQ(apart.wall_missing, WallMissing::kMeasuredApart);
  EXPECT_EQ(apart.verdict.verdict, Verdict::kUntested);
  EXPECT_TRUE(apart.empty());  // nothing else in common either

  CompareSide nsys;
  nsys.name = "n.sqlite";
  nsys.nsys_export = true;
  auto none = compare_sides(bench_side({10, 11}), nsys);
  EXPECT_EQ(none.wall_missing, WallMissing::kNoWall);
}

TEST(CompareLayers, ALayerOnlyOneSideHoldsIsNamedNotListed) {
  CompareSide a = bench_side({1});
  CompareSide b = bench_side({1});
  b.cpu = profile(3, 1);
  b.ops = TorchOpTable{};
  auto c = compare_sides(a, b);
  EXPECT_TRUE(c.sections.empty());
  ASSERT_EQ(c.one_sided.size(), 2u);
  EXPECT_EQ(c.one_sided[0], std::make_pair(SectionKind::kCpuFunctions, false));
  EXPECT_EQ(c.one_sided[1], std::make_pair(SectionKind::kTorchOps, false));
  EXPECT_FALSE(c.empty());  // the wall time is in common
}

TEST(CompareLayers, SampledAgainstInstrumentedIsSaid) {
  CompareSide a = bench_side({1});
  CompareSide b = bench_side({1});
  a.cpu = profile(3, 1);
  b.cpu = profile(3, 1);
  b.cpu->mode = ProfileMode::kInstrumented;
  EXPECT_TRUE(compare_sides(a, b).cpu_modes_differ);
}

TEST(CompareLayers, LimitPerSection) {
  CompareSide a = bench_side({1});
  CompareSide b = bench_side({1});
  a.cpu = profile(10, 1);
  b.cpu = profile(4, 1);
  CompareOptions o;
  o.limit = 1;
  auto c = compare_sides(a, b, o);
  ASSERT_EQ(c.sections.size(), 1u);
  EXPECT_EQ(c.sections[0].diff.rows.size(), 1u);
  EXPECT_EQ(c.sections[0].diff.total_rows, 2u);
  EXPECT_EQ(section_key(c.sections[0].kind), "cpu_functions");
}

}  // namespace
}  // namespace strata::analysis
