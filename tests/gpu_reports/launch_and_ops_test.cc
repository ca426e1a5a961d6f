// cuda_kern_exec_sum and the op table (self vs total through nested NVTX
// ranges) on small files with known rows.
#include <gtest/gtest.h>

#include "analysis/gpu_summary.h"
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

TEST(CudaKernExecSum, SplitsApiQueueAndKernelTime) {
  testing::ScratchDir dir;
  std::string path = dir.file("exec.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    int64_t t = global_tid(10, 11);
    int64_t p = global_pid(10);
    // Launch 1: api 100, queue 1150 - 1100 = 50, kernel 100, total 1250 - 1000 = 250.
    b.runtime(1000, 1100, t, 1, "cudaLaunchKernel_v7000");
    b.kernel(1150, 1250, p, 1, "k1");
    // Launch 2: api 300, the kernel starts before the call returns (no queue
    // time), kernel 60, total max(2300, 2260) - 2000 = 300.
    b.runtime(2000, 2300, t, 2, "cudaLaunchKernel_v7000");
    b.kernel(2200, 2260, p, 2, "k1");
    // Another API and kernel: api 10, no queue, kernel 3, total 10.
    b.runtime(5000, 5010, t, 3, "cuLaunchKernel", 1);
    b.kernel(5005, 5008, p, 3, "k2");
    // Same correlationId in another process: not this launch.
    b.kernel(1150, 1250, global_pid(99), 1, "k1");
    b.commit();
  }
  auto tables = testing::load_file(path);
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  auto summary = analysis::cuda_kern_exec_sum(*tables);
  EXPECT_EQ(summary.kernels_unmatched, 1);
  auto r = report::cuda_kern_exec_sum_report(summary, path);
  EXPECT_EQ(r.table.title, " ** CUDA Kernel Launch & Exec Time Summary (cuda_kern_exec_sum):");
  std::vector<std::string> names;
  for (const auto& c : r.table.columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "PID",       "TID",        "DevId",     "Count",     "QCount",
                       "TAvg (ns)", "TMed (ns)",  "TMin (ns)", "TMax (ns)", "TStdDev (ns)",
                       "AAvg (ns)", "AMed (ns)",  "AMin (ns)", "AMax (ns)", "AStdDev (ns)",
                       "QAvg (ns)", "QMed (ns)",  "QMin (ns)", "QMax (ns)", "QStdDev (ns)",
                       "KAvg (ns)", "KMed (ns)",  "KMin (ns)", "KMax (ns)", "KStdDev (ns)",
                       "API Name",  "Kernel Name"}));
  ASSERT_EQ(r.table.rows.size(), 2u);
  // Total sd sqrt(2 * 25^2) = 35.36, api sd sqrt(2 * 100^2) = 141.42, kernel sd sqrt(2 * 20^2)
  // = 28.28.
  EXPECT_EQ(texts(r.table.rows[0]), (std::vector<std::string>{"10",    "11",
                                                              "0",     "2",
                                                              "1",     "275.0",
                                                              "275.0", "250",
                                                              "300",   "35.4",
                                                              "200.0", "200.0",
                                                              "100",   "300",
                                                              "141.4", "50.0",
                                                              "50.0",  "50",
                                                              "50",    "0.0",
                                                              "80.0",  "80.0",
                                                              "60",    "100",
                                                              "28.3",  "cudaLaunchKernel",
                                                              "k1"}));
  EXPECT_EQ(texts(r.table.rows[1]), (std::vector<std::string>{"10",   "11",
                                                              "0",    "1",
                                                              "0",    "10.0",
                                                              "10.0", "10",
                                                              "10",   "0.0",
                                                              "10.0", "10.0",
                                                              "10",   "10",
                                                              "0.0",  "",
                                                              "",     "",
                                                              "",     "",
                                                              "3.0",  "3.0",
                                                              "3",    "3",
                                                              "0.0",  "cuLaunchKernel",
                                                              "k2"}));
  EXPECT_EQ(r.notes.size(), 1u);
}

TEST(OpTable, SelfAndTotalThroughNesting) {
  testing::ScratchDir dir;
  std::string path = dir.file("ops.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    int64_t t1 = global_tid(10, 11), t2 = global_tid(10, 12);
    int64_t p = global_pid(10);
    // step [0, 1ms] holds mm [100us, 400us] and mm [500us, 700us]; the second
    // mm holds add [550us, 650us].
    b.nvtx(0, 1'000'000, 59, t1, "step");
    b.nvtx(100'000, 400'000, 59, t1, "mm");
    b.nvtx(500'000, 700'000, 59, t1, "mm");
    b.nvtx(550'000, 650'000, 59, t1, "add");
    b.runtime(150'000, 160'000, t1, 1, "cudaLaunchKernel");      // in the first mm
    b.runtime(560'000, 570'000, t1, 2, "cudaLaunchKernel");      // in add (in mm, in step)
    b.runtime(800'000, 810'000, t1, 3, "cudaLaunchKernel");      // in step only
    b.runtime(2'000'000, 2'010'000, t1, 4, "cudaLaunchKernel");  // after every range
    b.runtime(150'000, 160'000, t2, 5, "cudaLaunchKernel");      // another thread
    b.kernel(200'000, 250'000, p, 1, "gemm");                    // 50 us
    b.kernel(600'000, 630'000, p, 2, "add_k");                   // 30 us
    b.kernel(900'000, 920'000, p, 3, "reduce");                  // 20 us
    b.kernel(2'100'000, 2'107'000, p, 4, "late");                // 7 us
    b.kernel(300'000, 303'000, p, 5, "other");                   // 3 us
    b.kernel(0, 1'000, p, 99, "orphan");                         // 1 us, no launch call
    b.commit();
  }
  auto tables = testing::load_file(path);
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  auto ops = analysis::op_table(*tables);
  // Self CPU: step 1000 - 300 - 200 = 500 us; mm 300 + (200 - 100) = 400 us; add 100 us.
  EXPECT_EQ(ops.self_cpu_total_ns, 1'000'000);
  EXPECT_EQ(ops.self_gpu_total_ns, 111'000);
  EXPECT_EQ(ops.kernels_outside_ranges, 3);
  ASSERT_EQ(ops.rows.size(), 3u);
  EXPECT_EQ(ops.rows[0].name, "mm");
  EXPECT_EQ(ops.rows[0].self_gpu_ns, 50'000);
  EXPECT_EQ(ops.rows[0].gpu_total_ns, 80'000);
  EXPECT_EQ(ops.rows[1].name, "add");
  EXPECT_EQ(ops.rows[2].name, "step");
  EXPECT_EQ(ops.rows[2].gpu_total_ns, 100'000);

  auto r = report::op_sum_report(ops, path);
  std::vector<std::string> names;
  for (const auto& c : r.table.columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                       "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "# of Calls"}));
  // Percentages of CPU over the self CPU total (1 ms), of CUDA over all kernel time (111 us).
  EXPECT_EQ(
      texts(r.table.rows[0]),
      (std::vector<std::string>{"mm", "40.00%", "400.000us", "50.00%", "500.000us", "250.000us",
                                "50.000us", "45.05%", "80.000us", "40.000us", "2"}));
  EXPECT_EQ(
      texts(r.table.rows[1]),
      (std::vector<std::string>{"add", "10.00%", "100.000us", "10.00%", "100.000us", "100.000us",
                                "30.000us", "27.03%", "30.000us", "30.000us", "1"}));
  EXPECT_EQ(
      texts(r.table.rows[2]),
      (std::vector<std::string>{"step", "50.00%", "500.000us", "100.00%", "1.000ms", "1.000ms",
                                "20.000us", "18.02%", "100.000us", "100.000us", "1"}));
  EXPECT_EQ(*r.table.rows[2][4].number, 1000.0);  // microseconds in JSON
  ASSERT_GE(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0], "Self CPU time total: 1.000ms");
  EXPECT_EQ(r.notes[1], "Self CUDA time total: 111.000us");

  analysis::OpTableOptions by_cpu;
  by_cpu.sort = analysis::OpSort::kCpuTotal;
  by_cpu.limit = 1;
  auto top = analysis::op_table(*tables, by_cpu);
  ASSERT_EQ(top.rows.size(), 1u);
  EXPECT_EQ(top.rows[0].name, "step");
}

TEST(TorchTime, UnitsAsTorchPrintsThem) {
  EXPECT_EQ(report::torch_time(0.0), "0.000us");
  EXPECT_EQ(report::torch_time(999.9994), "999.999us");
  EXPECT_EQ(report::torch_time(1000.0), "1.000ms");
  EXPECT_EQ(report::torch_time(2.5e6), "2.500s");
}

}  // namespace
}  // namespace strata
