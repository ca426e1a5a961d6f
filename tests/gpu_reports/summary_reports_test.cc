// cuda_api_sum, cuda_gpu_kern_sum, the two memory summaries and nsys_sum on
// small files with known rows; every expected number is worked out in the
// comments (sample standard deviation, median of even counts = mean of the
// middle two, one-decimal rounding half away from zero as SQLite's round()).
#include <gtest/gtest.h>

#include "analysis/gpu_summary.h"
#include "report/gpu_reports.h"
#include "trace_builder.h"

namespace strata {
namespace {

using report::Format;
using testing::global_pid;
using testing::global_tid;

std::vector<std::string> texts(const std::vector<report::Cell>& row) {
  std::vector<std::string> out;
  for (const auto& cell : row) out.push_back(cell.text);
  return out;
}

std::vector<std::string> column_names(const report::Table& table) {
  std::vector<std::string> out;
  for (const auto& c : table.columns) out.push_back(c.name);
  return out;
}

store::GpuTables load(const std::string& path, const store::GpuLoadOptions& options = {}) {
  auto tables = testing::load_file(path, options);
  EXPECT_TRUE(tables.ok()) << tables.error().message;
  return std::move(*tables);
}

TEST(CudaApiSum, RowsNumbersAndOrder) {
  testing::ScratchDir dir;
  std::string path = dir.file("api.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    int64_t t = global_tid(100, 101);
    // cudaLaunchKernel_v7000: 10 20 30 40 -> total 100, mean 25, median (20+30)/2 = 25,
    // sd sqrt((225+25+25+225)/3) = 12.909... -> 12.9; the "_v7000" suffix is stripped.
    for (int64_t d : {40, 10, 30, 20}) b.runtime(1000, 1000 + d, t, 0, "cudaLaunchKernel_v7000");
    // A 7-character suffix stays, as in nsys's output: 5 7 9 -> mean 7, sd sqrt(8/2) = 2.
    for (int64_t d : {9, 5, 7}) b.runtime(0, d, t, 0, "cudaStreamIsCapturing_v10000");
    // A driver call (eventClass 1), one instance: sd printed 0.0.
    b.runtime(5000, 5300, t, 0, "cuLibraryLoadData", 1);
    b.commit();
  }
  auto summary = analysis::cuda_api_sum(load(path));
  ASSERT_TRUE(summary.missing.empty());
  auto r = report::cuda_api_sum_report(summary, path);
  EXPECT_EQ(r.table.title, " ** CUDA API Summary (cuda_api_sum):");
  EXPECT_EQ(column_names(r.table),
            (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)",
                                      "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"}));
  ASSERT_EQ(r.table.rows.size(), 3u);
  // Grand total 421: 300/421 = 71.26%, 100/421 = 23.75%, 21/421 = 4.99%.
  EXPECT_EQ(texts(r.table.rows[0]),
            (std::vector<std::string>{"71.3", "300", "1", "300.0", "300.0", "300", "300", "0.0",
                                      "cuLibraryLoadData"}));
  EXPECT_EQ(texts(r.table.rows[1]),
            (std::vector<std::string>{"23.8", "100", "4", "25.0", "25.0", "10", "40", "12.9",
                                      "cudaLaunchKernel"}));
  EXPECT_EQ(texts(r.table.rows[2]),
            (std::vector<std::string>{"5.0", "21", "3", "7.0", "7.0", "5", "9", "2.0",
                                      "cudaStreamIsCapturing_v10000"}));
  EXPECT_EQ(*r.table.rows[1][3].number, 25.0);

  std::string text = report::render_gpu_report(r, Format::kTable);
  EXPECT_EQ(text.rfind(" ** CUDA API Summary (cuda_api_sum):\n\n", 0), 0u) << text;
  EXPECT_NE(text.find("cudaLaunchKernel\n"), std::string::npos);

  // nsys's "column" output groups digits; the "table" output does not.
  analysis::GpuSummary big;
  big.rows.push_back({100.0, {2, 2469134, 1234567.0, 1234567.0, 1234560, 1234574, 9.9}, "x", ""});
  report::GpuReportOptions grouped;
  grouped.thousands_separators = true;
  auto g = report::cuda_api_sum_report(big, path, grouped);
  EXPECT_EQ(texts(g.table.rows[0]),
            (std::vector<std::string>{"100.0", "2,469,134", "2", "1,234,567.0", "1,234,567.0",
                                      "1,234,560", "1,234,574", "9.9", "x"}));
}

TEST(CudaGpuKernSum, MergesEqualNamesAndBreaksTiesAsNsys) {
  testing::ScratchDir dir;
  std::string path = dir.file("kern.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    int64_t p = global_pid(100);
    // "kernA" under two StringIds ids (nsys groups by the text): 1 2 3 3 ->
    // total 9, mean 2.25 -> "2.3" (an exact tie, rounded away from zero),
    // median (2+3)/2 = 2.5, sd sqrt(2.75/3) = 0.957 -> "1.0".
    int64_t a1 = b.new_string("kernA"), a2 = b.new_string("kernA");
    int64_t base_a = b.new_string("A");
    b.kernel_ids(0, 1, p, 1, a1, base_a, b.new_string("_Z5kernAv"));
    b.kernel_ids(0, 2, p, 2, a2, base_a);
    b.kernel_ids(0, 3, p, 3, a1, base_a);
    b.kernel_ids(0, 3, p, 4, a2, base_a);
    // "kernB": total 9 too, one instance: nsys orders ties by instances ascending.
    b.kernel(0, 9, p, 5, "kernB");
    // "kernC": 100 200 600 -> mean 300, median 200, sd sqrt(140000/2) = 264.575 -> 264.6.
    for (int64_t d : {600, 100, 200}) b.kernel(1000, 1000 + d, p, 6, "kernC");
    b.commit();
  }
  auto r = report::cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(load(path)), path);
  EXPECT_EQ(r.table.title, " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):");
  EXPECT_EQ(r.table.columns[2].name, "Instances");
  ASSERT_EQ(r.table.rows.size(), 3u);
  // Grand total 918: 900 -> 98.04%, 9 -> 0.98%.
  EXPECT_EQ(texts(r.table.rows[0]), (std::vector<std::string>{"98.0", "900", "3", "300.0", "200.0",
                                                              "100", "600", "264.6", "kernC"}));
  EXPECT_EQ(texts(r.table.rows[1]),
            (std::vector<std::string>{"1.0", "9", "1", "9.0", "9.0", "9", "9", "0.0", "kernB"}));
  EXPECT_EQ(texts(r.table.rows[2]),
            (std::vector<std::string>{"1.0", "9", "4", "2.3", "2.5", "1", "3", "1.0", "kernA"}));

  // :base groups by shortName; :mangled falls back per row to the demangled name.
  store::GpuLoadOptions base;
  base.kernel_names = store::KernelNameKind::kBase;
  auto rb = analysis::cuda_gpu_kern_sum(load(path, base));
  ASSERT_EQ(rb.rows.size(), 3u);
  EXPECT_EQ(rb.rows[2].name, "A");
  store::GpuLoadOptions mangled;
  mangled.kernel_names = store::KernelNameKind::kMangled;
  auto rm = analysis::cuda_gpu_kern_sum(load(path, mangled));
  ASSERT_EQ(rm.rows.size(), 4u);
  EXPECT_EQ(rm.rows[3].name, "_Z5kernAv");
  EXPECT_EQ(rm.rows[3].stats.count, 1);
  EXPECT_EQ(rm.rows[2].name, "kernA");
  EXPECT_EQ(rm.rows[2].stats.count, 3);
}

TEST(CudaGpuMemSums, TimeAndSizeWithNsysLabels) {
  testing::ScratchDir dir;
  std::string path = dir.file("mem.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    // Host-to-Device: 100 ns 1 MB, 300 ns 3 MB -> sizes mean 2, sd sqrt(2e12) B = 1.414 MB.
    b.memcpy(0, 100, 1'000'000, 1);
    b.memcpy(0, 300, 3'000'000, 1);
    b.memcpy(0, 50, 4'194'304, 2);  // Device-to-Host: 4 MiB = 4.194 MB
    b.memcpy(0, 70, 5, 99);         // a copyKind missing from the enum: nsys drops it
    b.memset(0, 25, 10);
    b.memset(10, 35, 20);
    b.commit();
  }
  auto tables = load(path);
  auto time = analysis::cuda_gpu_mem_time_sum(tables);
  EXPECT_EQ(time.rows_left_out, 1);
  auto rt = report::cuda_gpu_mem_time_sum_report(time, path);
  EXPECT_EQ(rt.table.title, " ** CUDA GPU MemOps Summary (by Time) (cuda_gpu_mem_time_sum):");
  EXPECT_EQ(
      column_names(rt.table),
      (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Med (ns)",
                                "Min (ns)", "Max (ns)", "StdDev (ns)", "Operation"}));
  ASSERT_EQ(rt.table.rows.size(), 3u);
  // Grand total 500; the two 50 ns totals tie and go by name.
  EXPECT_EQ(texts(rt.table.rows[0]),
            (std::vector<std::string>{"80.0", "400", "2", "200.0", "200.0", "100", "300", "141.4",
                                      "[CUDA memcpy Host-to-Device]"}));
  EXPECT_EQ(texts(rt.table.rows[1]),
            (std::vector<std::string>{"10.0", "50", "1", "50.0", "50.0", "50", "50", "0.0",
                                      "[CUDA memcpy Device-to-Host]"}));
  EXPECT_EQ(texts(rt.table.rows[2]),
            (std::vector<std::string>{"10.0", "50", "2", "25.0", "25.0", "25", "25", "0.0",
                                      "[CUDA memset]"}));
  EXPECT_EQ(rt.notes.size(), 1u);

  auto rs = report::cuda_gpu_mem_size_sum_report(analysis::cuda_gpu_mem_size_sum(tables), path);
  EXPECT_EQ(rs.table.title, " ** CUDA GPU MemOps Summary (by Size) (cuda_gpu_mem_size_sum):");
  EXPECT_EQ(column_names(rs.table),
            (std::vector<std::string>{"Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)",
                                      "Max (MB)", "StdDev (MB)", "Operation"}));
  ASSERT_EQ(rs.table.rows.size(), 3u);
  EXPECT_EQ(texts(rs.table.rows[0]),
            (std::vector<std::string>{"4.194", "1", "4.194", "4.194", "4.194", "4.194", "0.000",
                                      "[CUDA memcpy Device-to-Host]"}));
  EXPECT_EQ(texts(rs.table.rows[1]),
            (std::vector<std::string>{"4.000", "2", "2.000", "2.000", "1.000", "3.000", "1.414",
                                      "[CUDA memcpy Host-to-Device]"}));
  EXPECT_EQ(texts(rs.table.rows[2]),
            (std::vector<std::string>{"0.000", "2", "0.000", "0.000", "0.000", "0.000", "0.000",
                                      "[CUDA memset]"}));
  EXPECT_DOUBLE_EQ(*rs.table.rows[0][0].number, 4.194304);
}

TEST(NvtxSum, StylesDomainsAndOpenRanges) {
  testing::ScratchDir dir;
  std::string path = dir.file("nvtx.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    int64_t t = global_tid(100, 101);
    b.nvtx(0, 1000, 59, t, "outer");
    b.nvtx(100, 400, 59, t, "inner");
    b.nvtx(500, 700, 59, t, "inner");  // 300, 200: sd sqrt(2 * 50^2) = 70.71
    b.nvtx(50, 250, 60, t, "phase", /*registered=*/false);
    // Never closed: lasts until the table's last timestamp (5000, a mark).
    b.nvtx(4000, std::nullopt, 60, t, "phase", false);
    b.nvtx(5000, std::nullopt, 34, t, "a mark");
    b.nvtx(10, std::nullopt, 75, t, "mydom", true, 7);  // domain 7 created
    b.nvtx(2000, 2100, 59, t, "work", true, 7);
    b.commit();
  }
  auto r = report::nvtx_sum_report(analysis::nvtx_sum(load(path)), path);
  EXPECT_EQ(r.table.title, " ** NVTX Range Summary (nvtx_sum):");
  EXPECT_EQ(
      column_names(r.table),
      (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                                "Min (ns)", "Max (ns)", "StdDev (ns)", "Style", "Range"}));
  ASSERT_EQ(r.table.rows.size(), 4u);
  // Grand total 2800.
  EXPECT_EQ(texts(r.table.rows[0]),
            (std::vector<std::string>{"42.9", "1200", "2", "600.0", "600.0", "200", "1000", "565.7",
                                      "StartEnd", ":phase"}));
  EXPECT_EQ(texts(r.table.rows[1]),
            (std::vector<std::string>{"35.7", "1000", "1", "1000.0", "1000.0", "1000", "1000",
                                      "0.0", "PushPop", ":outer"}));
  EXPECT_EQ(texts(r.table.rows[2]),
            (std::vector<std::string>{"17.9", "500", "2", "250.0", "250.0", "200", "300", "70.7",
                                      "PushPop", ":inner"}));
  EXPECT_EQ(texts(r.table.rows[3]),
            (std::vector<std::string>{"3.6", "100", "1", "100.0", "100.0", "100", "100", "0.0",
                                      "PushPop", "mydom:work"}));
}

TEST(Rounding, HalfAwayFromZeroOnExactTiesOnly) {
  EXPECT_EQ(analysis::round1(2.25), 2.3);
  EXPECT_EQ(analysis::round1(-2.25), -2.3);
  EXPECT_EQ(analysis::round1(0.05), 0.1);  // 0.05 is a hair above the tie in binary
  // 0.15 is 0.1499999999999999944... in binary: below the tie, though 0.15 * 10 == 1.5.
  EXPECT_EQ(analysis::round1(0.15), 0.1);
  EXPECT_EQ(analysis::round1(1234.56), 1234.6);
  EXPECT_EQ(analysis::round1(7.0), 7.0);
}

TEST(IntStats, MatchesTheSharedConventions) {
  std::vector<int64_t> even = {4, 1, 3, 2};
  auto s = analysis::int_stats(even);
  EXPECT_EQ(s.total, 10);
  EXPECT_EQ(s.median, 2.5);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_NEAR(s.stddev, 1.2909944, 1e-6);
  std::vector<int64_t> one = {7};
  EXPECT_EQ(analysis::int_stats(one).stddev, 0.0);
}

}  // namespace
}  // namespace strata
