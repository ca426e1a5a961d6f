// Rows of two summaries side by side: matching, added and removed rows, the
// order (largest change first) and the limit.
#include "analysis/row_diff.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::analysis {
namespace {

KeyedRow row(std::string name, std::vector<double> values, int64_t count) {
  return KeyedRow{name, name, std::move(values), count};
}

std::vector<std::string> names(const RowDiff& d) {
  std::vector<std::string> out;
  for (const auto& r : d.rows) out.push_back(r.name);
  return out;
}

const DiffRow& find(const RowDiff& d, const std::string& name) {
  for (const auto& r : d.rows) {
    if (r.name == name) return r;
  }
  static DiffRow none;
  ADD_FAILURE() << "no row " << name;
  return none;
}

TEST(RowDiff, MatchesByKeyAndMarksAddedAndRemoved) {
  std::vector<KeyedRow> a = {row("cudaLaunchKernel", {500}, 129),
                             row("cudaDeviceSynchronize", {1200}, 134), row("cudaMemcpy", {30}, 3)};
  std::vector<KeyedRow> b = {row("cudaMemcpy", {40}, 3), row("cudaLaunchKernel", {20}, 2),
                             row("cudaGraphLaunch", {5}, 1)};
  auto d = diff_rows(a, b, {});
  ASSERT_EQ(d.rows.size(), 4u);
  EXPECT_EQ(d.total_rows, 4u);
  EXPECT_EQ(d.added, 1u);
  EXPECT_EQ(d.removed, 1u);
  const auto& sync = find(d, "cudaDeviceSynchronize");
  EXPECT_EQ(sync.change, RowChange::kRemoved);
  EXPECT_EQ(sync.a, (std::vector<double>{1200}));
  EXPECT_EQ(sync.b, (std::vector<double>{0}));
  EXPECT_EQ(sync.count_a, 134);
  EXPECT_EQ(sync.count_b, 0);
  const auto& graph = find(d, "cudaGraphLaunch");
  EXPECT_EQ(graph.change, RowChange::kAdded);
  EXPECT_EQ(graph.a, (std::vector<double>{0}));
  EXPECT_EQ(graph.count_b, 1);
  const auto& launch = find(d, "cudaLaunchKernel");
  EXPECT_EQ(launch.change, RowChange::kBoth);
  EXPECT_EQ(launch.count_a, 129);
  EXPECT_EQ(launch.count_b, 2);
  // Totals over all rows.
  EXPECT_EQ(d.total_a, (std::vector<double>{1730}));
  EXPECT_EQ(d.total_b, (std::vector<double>{65}));
  EXPECT_EQ(d.count_a, 266);
  EXPECT_EQ(d.count_b, 6);
}

TEST(RowDiff, LargestAbsoluteChangeFirstEitherWay) {
  std::vector<KeyedRow> a = {row("small", {100}, 1), row("faster", {1000}, 1),
                             row("slower", {10}, 1)};
  std::vector<KeyedRow> b = {row("small", {110}, 1), row("faster", {400}, 1),
                             row("slower", {710}, 1)};
  auto d = diff_rows(a, b, {});
  EXPECT_EQ(names(d), (std::vector<std::string>{"slower", "faster", "small"}));
}

TEST(RowDiff, TiesGoToTheCountChangeThenTheName) {
  std::vector<KeyedRow> a = {row("b", {5}, 1), row("a", {5}, 1), row("c", {5}, 1)};
  std::vector<KeyedRow> b = {row("b", {5}, 1), row("a", {5}, 1), row("c", {5}, 9)};
  EXPECT_EQ(names(diff_rows(a, b, {})), (std::vector<std::string>{"c", "a", "b"}));
}

TEST(RowDiff, LimitKeepsTheLargestAndTheTotalsOfAll) {
  std::vector<KeyedRow> a, b;
  for (int i = 1; i <= 10; ++i) {
    a.push_back(row("f" + std::to_string(i), {0.0 + i}, 1));
    b.push_back(row("f" + std::to_string(i), {2.0 * i}, 1));
  }
  RowDiffOptions o;
  o.limit = 3;
  auto d = diff_rows(a, b, o);
  EXPECT_EQ(names(d), (std::vector<std::string>{"f10", "f9", "f8"}));
  EXPECT_EQ(d.total_rows, 10u);
  EXPECT_EQ(d.total_a, (std::vector<double>{55}));
  EXPECT_EQ(d.total_b, (std::vector<double>{110}));
}

TEST(RowDiff, SortsByTheMeasuresAskedSummed) {
  // Two measures (Self CPU, Self CUDA): "gpu" moved 90 on the second,
  // "cpu" 50 on the first; with both counted, gpu is first.
  std::vector<KeyedRow> a = {row("cpu", {100, 0}, 1), row("gpu", {10, 100}, 1)};
  std::vector<KeyedRow> b = {row("cpu", {150, 0}, 1), row("gpu", {10, 10}, 1)};
  RowDiffOptions o;
  o.measures = 2;
  o.sort_by = {0, 1};
  EXPECT_EQ(names(diff_rows(a, b, o)), (std::vector<std::string>{"gpu", "cpu"}));
  o.sort_by = {0};
  EXPECT_EQ(names(diff_rows(a, b, o)), (std::vector<std::string>{"cpu", "gpu"}));
}

TEST(RowDiff, RowsOfOneKeyAddUp) {
  // Functions are keyed without their line: two rows of one key are one.
  std::vector<KeyedRow> a = {{"f.cc\x1f"
                              "f",
                              "f.cc:10(f)",
                              {3, 5},
                              2},
                             {"f.cc\x1f"
                              "f",
                              "f.cc:10(f)",
                              {1, 1},
                              1}};
  std::vector<KeyedRow> b = {
      {"f.cc\x1f"
       "f",
       "f.cc:12(f)",
       {2, 2},
       1}};
  RowDiffOptions o;
  o.measures = 2;
  auto d = diff_rows(a, b, o);
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].name, "f.cc:12(f)");  // B's name
  EXPECT_EQ(d.rows[0].a, (std::vector<double>{4, 6}));
  EXPECT_EQ(d.rows[0].count_a, 3);
  EXPECT_EQ(d.rows[0].change, RowChange::kBoth);
}

TEST(RowDiff, EmptySides) {
  auto d = diff_rows({}, {}, {});
  EXPECT_TRUE(d.rows.empty());
  EXPECT_EQ(d.total_rows, 0u);
  std::vector<KeyedRow> b = {row("x", {1}, 1)};
  auto added = diff_rows({}, b, {});
  ASSERT_EQ(added.rows.size(), 1u);
  EXPECT_EQ(added.rows[0].change, RowChange::kAdded);
}

}  // namespace
}  // namespace strata::analysis
