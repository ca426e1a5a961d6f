// One document per command (issue 22 item 5): what a JSON parser and a CSV
// reader get from several reports.
#include "report/report_document.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::report {
namespace {

Table two_rows() {
  Table t;
  t.title = " ** CUDA API Summary (cuda_api_sum):";
  t.columns = {{"Name", Align::kLeft}, {"Calls"}};
  t.rows = {{text_cell("cudaMalloc"), number_cell(2, 0)},
            {text_cell("a\x7f"
                       "b"),
             number_cell(1, 0)}};
  return t;
}

Table no_rows() {
  Table t = two_rows();
  t.title = " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):";
  t.rows.clear();
  return t;
}

TEST(ReportDocument, JsonIsOneObjectKeyedByReportNameEmptyReportsIncluded) {
  ReportDocument doc(Format::kJson);
  doc.add("cuda_api_sum", two_rows().title, render(two_rows(), Format::kJson));
  doc.add("cuda_gpu_kern_sum", no_rows().title, render(no_rows(), Format::kJson));
  doc.add("kernels", section_title("Kernel Sections", "kernels"), "{\"kernels\": [1, 2]}");
  doc.add("cpu", section_title("CPU Profile", "cpu"), "{\"header\": {}, \"functions\": []}");
  std::string text = doc.render();
  auto j = nlohmann::ordered_json::parse(text);  // throws on concatenated values
  ASSERT_TRUE(j.is_object());
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"cuda_api_sum", "cuda_gpu_kern_sum", "kernels", "cpu"}));
  ASSERT_EQ(j["cuda_api_sum"].size(), 2u);
  EXPECT_EQ(j["cuda_api_sum"][0]["Calls"], 2);
  EXPECT_EQ(j["cuda_api_sum"][1]["Name"],
            "a\x7f"
            "b");
  EXPECT_TRUE(j["cuda_gpu_kern_sum"].is_array());
  EXPECT_TRUE(j["cuda_gpu_kern_sum"].empty());
  // kernels' own {"kernels": [...]} is not nested twice.
  EXPECT_EQ(j["kernels"], nlohmann::ordered_json::parse("[1, 2]"));
  EXPECT_TRUE(j["cpu"].contains("functions"));
  // DEL stays escaped as in every strata JSON output.
  EXPECT_NE(text.find("a\\u007fb"), std::string::npos) << text;
}

TEST(ReportDocument, JsonOfNoReportIsAnEmptyObject) {
  EXPECT_EQ(ReportDocument(Format::kJson).render(), "{}\n");
}

TEST(ReportDocument, CsvSectionsAreTitledOnlyWhenThereAreSeveral) {
  ReportDocument one(Format::kCsv);
  one.add("cuda_api_sum", two_rows().title, render(two_rows(), Format::kCsv));
  EXPECT_EQ(one.render(), render(two_rows(), Format::kCsv));

  ReportDocument two(Format::kCsv);
  two.add("cuda_api_sum", two_rows().title, render(two_rows(), Format::kCsv));
  two.add("cuda_gpu_kern_sum", no_rows().title, render(no_rows(), Format::kCsv));
  std::string text = two.render();
  EXPECT_EQ(text.rfind(" ** CUDA API Summary (cuda_api_sum):\n\nName,Calls\n", 0), 0u) << text;
  // The empty report is there: its title and header row.
  EXPECT_NE(text.find("\n\n ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\nName,Calls\n"),
            std::string::npos)
      << text;
}

TEST(ReportDocument, CsvFilesAreNamedAsNsysStatsNamesThem) {
  ReportDocument doc(Format::kCsv);
  doc.add("cuda_api_sum", "", "a\n");
  doc.add("nvtx_sum", "", "b\n");
  auto files = doc.csv_files(report_file_base("runs/trace.sqlite"));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "trace_cuda_api_sum.csv");
  EXPECT_EQ(files[0].second, "a\n");
  EXPECT_EQ(files[1].first, "trace_nvtx_sum.csv");
}

TEST(ReportDocument, TableSectionsAreSeparatedByABlankLineAndEmptyOnesLeftOut) {
  ReportDocument doc(Format::kTable);
  doc.add("a", "", "first\n");
  doc.add("b", "", "");
  doc.add("c", "", "second\n");
  EXPECT_EQ(doc.render(), "first\n\nsecond\n");
  EXPECT_EQ(doc.sections().size(), 2u);
}

TEST(ReportDocument, AddingANameAgainReplacesItsText) {
  ReportDocument doc(Format::kJson);
  doc.add("op_sum", "", "[1]");
  doc.add("op_sum", "", "[2]");
  EXPECT_EQ(nlohmann::json::parse(doc.render())["op_sum"], nlohmann::json::parse("[2]"));
}

TEST(ReportFileBase, DropsDirectoryAndLastExtension) {
  EXPECT_EQ(report_file_base("a/b/run.nsys.sqlite"), "run.nsys");
  EXPECT_EQ(report_file_base("trace"), "trace");
  EXPECT_EQ(report_file_base(".hidden"), ".hidden");
  EXPECT_EQ(report_file_base("dir/"), "report");
}

}  // namespace
}  // namespace strata::report
