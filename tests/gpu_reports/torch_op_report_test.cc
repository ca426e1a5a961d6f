// op_sum's two tables: torch.profiler's (report::torch_op_sum_report, from
// analysis::TorchOpTable) and the NVTX one with emit_nvtx's suffixes dropped.
#include <gtest/gtest.h>

#include "analysis/gpu_summary.h"
#include "analysis/torch_op_table.h"
#include "report/gpu_reports.h"
#include "trace_builder.h"

namespace strata {
namespace {

using testing::global_pid;
using testing::global_tid;

std::vector<std::string> texts(const std::vector<report::Cell>& row) {
  std::vector<std::string> out;
  for (const auto& cell : row) out.push_back(cell.text);
  return out;
}

std::vector<std::string> column_names(const report::GpuReport& r) {
  std::vector<std::string> names;
  for (const auto& c : r.table.columns) names.push_back(c.name);
  return names;
}

analysis::TorchOpTable cuda_table() {
  analysis::TorchOpTable t;
  analysis::TorchOpTableRow mm;
  mm.name = "aten::mm";
  mm.calls = 2;
  mm.self_cpu_ns = 400'000;
  mm.cpu_total_ns = 500'000;
  mm.self_cuda_ns = 14'000;
  mm.cuda_total_ns = 14'000;
  analysis::TorchOpTableRow gemm;
  gemm.name = "gemm";
  gemm.device = true;
  gemm.calls = 2;
  gemm.self_cuda_ns = 14'000;
  gemm.cuda_total_ns = 14'000;
  t.rows = {mm, gemm};
  t.self_cpu_total_ns = 1'000'000;
  t.self_cuda_total_ns = 14'000;
  return t;
}

TEST(TorchOpReport, TorchsColumnsUnitsAndTotals) {
  auto r = report::torch_op_sum_report(cuda_table());
  EXPECT_EQ(column_names(r),
            (std::vector<std::string>{"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                      "CPU time avg", "Self CUDA", "Self CUDA %", "CUDA total",
                                      "CUDA time avg", "# of Calls"}));
  EXPECT_EQ(
      texts(r.table.rows[0]),
      (std::vector<std::string>{"aten::mm", "40.00%", "400.000us", "50.00%", "500.000us",
                                "250.000us", "14.000us", "100.00%", "14.000us", "7.000us", "2"}));
  EXPECT_EQ(texts(r.table.rows[1]),
            (std::vector<std::string>{"gemm", "0.00%", "0.000us", "0.00%", "0.000us", "0.000us",
                                      "14.000us", "100.00%", "14.000us", "7.000us", "2"}));
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0], "Self CPU time total: 1.000ms");
  EXPECT_EQ(r.notes[1], "Self CUDA time total: 14.000us");
}

TEST(TorchOpReport, CpuOnlyLeavesOutTheCudaColumnsAsTorchDoes) {
  analysis::TorchOpTable t;
  analysis::TorchOpTableRow add;
  add.name = "aten::add";
  add.calls = 1;
  add.self_cpu_ns = add.cpu_total_ns = 2'500'000'000;
  t.rows = {add};
  t.self_cpu_total_ns = 2'500'000'000;
  auto r = report::torch_op_sum_report(t);
  EXPECT_EQ(column_names(r),
            (std::vector<std::string>{"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                      "CPU time avg", "# of Calls"}));
  EXPECT_EQ(texts(r.table.rows[0])[2], "2.500s");
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "Self CPU time total: 2.500s");
}

TEST(TorchOpReport, ShapesAndStackColumnsAsTorchAddsThem) {
  analysis::TorchOpTable t = cuda_table();
  t.shapes_column = true;
  t.stack_column = true;
  t.rows[0].shapes = "[[8, 16], [16, 4]]";
  t.rows[0].stack = {"train.py(12): step", "train.py(30): main"};
  auto r = report::torch_op_sum_report(t);
  auto names = column_names(r);
  ASSERT_EQ(names.size(), 13u);
  EXPECT_EQ(names[11], "Input Shapes");
  EXPECT_EQ(names[12], "Source Location");
  // Table: the first frame on the row, the next on a row of its own.
  ASSERT_EQ(r.table.rows.size(), 3u);
  EXPECT_EQ(r.table.rows[0][11].text, "[[8, 16], [16, 4]]");
  EXPECT_EQ(r.table.rows[0][12].text, "train.py(12): step");
  EXPECT_EQ(r.table.rows[1][0].text, "");
  EXPECT_EQ(r.table.rows[1][12].text, "train.py(30): main");
  // CSV/JSON: one row, the frames in one cell.
  report::GpuReportOptions csv;
  csv.format = report::Format::kCsv;
  auto c = report::torch_op_sum_report(t, csv);
  ASSERT_EQ(c.table.rows.size(), 2u);
  EXPECT_EQ(c.table.rows[0][12].text, "train.py(12): step\ntrain.py(30): main");
}

TEST(TorchOpReport, LongNamesAreCutAsTorchCutsThem) {
  analysis::TorchOpTable t = cuda_table();
  t.rows[1].name = std::string(60, 'k');
  auto r = report::torch_op_sum_report(t);
  EXPECT_EQ(r.table.rows[1][0].text, std::string(52, 'k') + "...");
}

TEST(NvtxOpSum, EmitNvtxSuffixesAreDroppedAndTheirRowsMerged) {
  EXPECT_EQ(report::strip_emit_nvtx_suffix("aten::mm, seq = 12, op_id = 40"), "aten::mm");
  EXPECT_EQ(report::strip_emit_nvtx_suffix("aten::add, op_id = 3, sizes = [[2], [2]]"),
            "aten::add");
  EXPECT_EQ(report::strip_emit_nvtx_suffix("my range"), "my range");
  testing::ScratchDir dir;
  std::string path = dir.file("emit.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    int64_t t1 = global_tid(10, 11);
    b.nvtx(0, 100'000, 59, t1, "aten::mm, seq = 1, op_id = 1");
    b.nvtx(200'000, 250'000, 59, t1, "aten::mm, seq = 2, op_id = 2, sizes = [[2, 2], [2, 2]]");
    b.nvtx(300'000, 310'000, 59, t1, "aten::add, seq = 3, op_id = 3");
    b.runtime(10'000, 20'000, t1, 1, "cudaLaunchKernel");
    b.kernel(30'000, 40'000, global_pid(10), 1, "gemm");
    b.commit();
  }
  auto tables = testing::load_file(path);
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  auto r = report::op_sum_report(analysis::op_table(*tables), path);
  ASSERT_EQ(r.table.rows.size(), 2u);
  EXPECT_EQ(texts(r.table.rows[0])[0], "aten::mm");
  EXPECT_EQ(texts(r.table.rows[0])[10], "2");
  EXPECT_EQ(texts(r.table.rows[0])[4], "150.000us");
  EXPECT_EQ(texts(r.table.rows[1])[0], "aten::add");
}

}  // namespace
}  // namespace strata
