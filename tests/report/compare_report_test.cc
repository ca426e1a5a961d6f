// strata compare's tables and documents: signed changes, added and removed
// rows, columns without data left out, one JSON document, titled CSV
// sections, and the verdict and gate sentences.
#include "report/compare_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::report {
namespace {

using analysis::KeyedRow;
using analysis::SectionDiff;
using analysis::SectionKind;

SectionDiff section(SectionKind kind, std::vector<KeyedRow> a, std::vector<KeyedRow> b) {
  analysis::RowDiffOptions o;
  o.measures = analysis::section_measures(kind);
  o.sort_by = analysis::section_sort_by(kind);
  return {kind, analysis::diff_rows(a, b, o)};
}

std::vector<std::string> cells(const Table& t, size_t row) {
  std::vector<std::string> out;
  for (const auto& c : t.rows.at(row)) out.push_back(c.text);
  return out;
}

TEST(CompareReport, ApiRowsCarryBaseNewDeltaAndCounts) {
  auto s =
      section(SectionKind::kCudaApi,
              {{"sync", "cudaDeviceSynchronize", {1000}, 100}, {"memcpy", "cudaMemcpy", {50}, 2}},
              {{"memcpy", "cudaMemcpy", {75}, 2}, {"graph", "cudaGraphLaunch", {10}, 1}});
  Table t = compare_section_table(s);
  std::vector<std::string> names;
  for (const auto& c : t.columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Base (ns)", "New (ns)", "Δ (ns)", "Δ %", "Base Calls",
                                             "New Calls", "Δ Calls", "Change", "Name"}));
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(cells(t, 0), (std::vector<std::string>{"1000", "0", "-1000", "-100.0", "100", "0",
                                                   "-100", "removed", "cudaDeviceSynchronize"}));
  EXPECT_EQ(cells(t, 1), (std::vector<std::string>{"50", "75", "+25", "+50.0", "2", "2", "0", "",
                                                   "cudaMemcpy"}));
  EXPECT_EQ(cells(t, 2), (std::vector<std::string>{"0", "10", "+10", "-", "0", "1", "+1", "added",
                                                   "cudaGraphLaunch"}));
}

TEST(CompareReport, ASecondMeasureWithoutDataIsLeftOut) {
  // CPU-only PyTorch: Self CUDA is 0 everywhere.
  auto s = section(SectionKind::kTorchOps, {{"mm", "aten::mm", {2000, 0}, 3}},
                   {{"mm", "aten::mm", {1000, 0}, 3}});
  Table t = compare_section_table(s);
  EXPECT_EQ(t.columns.front().name, "Self CPU Base (us)");
  for (const auto& c : t.columns) EXPECT_EQ(c.name.find("CUDA"), std::string::npos) << c.name;
  EXPECT_EQ(cells(t, 0).at(2), "-1.000");  // us, 3 decimals
}

analysis::CompareSide side(std::string name, std::vector<double> wall) {
  analysis::CompareSide s;
  s.name = std::move(name);
  s.verb = "bench";
  s.command = {"prog", "--fast"};
  s.wall_source = "bench";
  s.wall = {{"wall", "ms", std::move(wall)}};
  return s;
}

TEST(CompareReport, JsonIsOneDocumentKeyedBySection) {
  auto a = side("a.sqlite", {10, 11, 12});
  auto b = side("b.sqlite", {20, 22, 24});
  auto c = analysis::compare_sides(a, b);
  c.sections.push_back(section(SectionKind::kKernels, {{"k", "gemm", {100}, 1}}, {}));
  auto r = render_comparison(a, b, c, Format::kJson);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("base").at("name"), "a.sqlite");
  EXPECT_EQ(doc.at("new").at("kind"), "strata bench");
  EXPECT_EQ(doc.at("wall").at("rows")[0].at("Base Runs"), 3);
  EXPECT_NEAR(doc.at("wall").at("rows")[0].at("Ratio").get<double>(), 2.0, 1e-12);
  EXPECT_EQ(doc.at("cuda_gpu_kern_sum").at("rows")[0].at("Change"), "removed");
  EXPECT_EQ(doc.at("verdict").at("verdict"), "regressed");
  EXPECT_LT(doc.at("verdict").at("p").get<double>(), 0.05);
  EXPECT_TRUE(r.notes.empty());
}

TEST(CompareReport, CsvSectionsAreTitledAndNotesGoApart) {
  auto a = side("a.sqlite", {10});
  auto b = side("b.sqlite", {12});
  auto c = analysis::compare_sides(a, b);
  auto r = render_comparison(a, b, c, Format::kCsv);
  EXPECT_EQ(r.out.rfind("# wall\nQuantity,Unit,Base Runs,", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n\n# verdict\nVerdict,Quantity,Ratio,CI Low,CI High,p,Reason\nuntested,"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].rfind("wall: no significance test: one run per side", 0), 0u);
}

TEST(CompareReport, TableHasTheSidesTheSectionsAndTheVerdict) {
  auto a = side("a.sqlite", {10, 11, 12});
  auto b = side("b.sqlite", {10, 11, 12});
  auto c = analysis::compare_sides(a, b);
  auto r = render_comparison(a, b, c, Format::kTable);
  EXPECT_EQ(r.out.rfind("strata compare: A is the base, B the new\n"
                        "  A: a.sqlite: strata bench of prog --fast\n"
                        "  B: b.sqlite: strata bench of prog --fast\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find(" ** Wall time (3 and 3 measured runs; Welch's t-test on log values, 95 % "
                       "confidence interval of the ratio B/A):"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nVerdict: no significant change: B's wall time is 1.000x A's (95 % CI "),
            std::string::npos)
      << r.out;
}

TEST(CompareReport, VerdictAndGateSentences) {
  auto slower = analysis::compare_sides(side("a", {10, 11, 12}), side("b", {20, 22, 24}));
  EXPECT_EQ(verdict_sentence(slower.verdict)
                .rfind("regressed: B's wall time is 2.000x A's, +100.0 % (95 % CI ", 0),
            0u)
      << verdict_sentence(slower.verdict);
  auto gate = analysis::check_gate(slower.verdict, 10);
  EXPECT_EQ(gate_sentence(slower.verdict, gate, 10).rfind("--gate 10: failed: ", 0), 0u);
  auto passed = analysis::check_gate(slower.verdict, 150);
  EXPECT_NE(gate_sentence(slower.verdict, passed, 150).find(": within 150 %"), std::string::npos);

  auto once = analysis::compare_sides(side("a", {10}), side("b", {20}));
  EXPECT_EQ(verdict_sentence(once.verdict),
            "untested: one run per side allows no significance test (B's wall time is 2.000x "
            "A's); the layers' changes are listed, no verdict is drawn from them");
  auto unchecked = analysis::check_gate(once.verdict, 5);
  EXPECT_EQ(gate_sentence(once.verdict, unchecked, 5),
            "--gate 5: not checked: one run per side allows no significance test");
}

}  // namespace
}  // namespace strata::report
