// strata's GPU reports on a real Nsight Systems export print exactly what
// `nsys stats` printed for it (tests/data/nsys-gpu_matmul-slow/COMMAND).
#include <gtest/gtest.h>

#include <sstream>

#include "cli_runner.h"

namespace strata::testing {
namespace {

const std::string kDir = STRATA_TEST_DATA "/nsys-gpu_matmul-slow";

// The CSV rows nsys printed for `report`, blank lines dropped.
std::string nsys_section(const std::string& report) {
  std::istringstream in(read_file(kDir + "/nsys-stats.csv"));
  std::string out;
  bool on = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Processing [", 0) == 0) {
      on = line.find("/" + report + ".py]") != std::string::npos;
      continue;
    }
    if (on && !line.empty()) out += line + "\n";
  }
  return out;
}

std::string without_blank_lines(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out += line + "\n";
  }
  return out;
}

class NsysCompat : public ::testing::TestWithParam<const char*> {};

TEST_P(NsysCompat, ReportMatchesNsysStats) {
  ScratchDir dir;
  std::string report = GetParam();
  auto r = run_strata("report '" + kDir + "/gpu_matmul_slow.sqlite' --report " + report +
                          " --format csv",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::string expected = nsys_section(report);
  ASSERT_FALSE(expected.empty()) << "no " << report << " section in nsys-stats.csv";
  EXPECT_EQ(without_blank_lines(r.out), expected);
}

INSTANTIATE_TEST_SUITE_P(GpuMatmulSlow, NsysCompat,
                         ::testing::Values("cuda_api_sum", "cuda_gpu_kern_sum",
                                           "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                                           "nvtx_sum", "cuda_kern_exec_sum"));

TEST(NsysCompat, UnknownReportIsAUsageError) {
  ScratchDir dir;
  auto r = run_strata("report '" + kDir + "/gpu_matmul_slow.sqlite' --report cuda_nope", dir.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
}

TEST(NsysCompat, DefaultReportsAreTheStatsSet) {
  ScratchDir dir;
  auto r = run_strata("report '" + kDir + "/gpu_matmul_slow.sqlite'", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* title : {"(nvtx_sum)", "(cuda_api_sum)", "(cuda_gpu_kern_sum)",
                            "(cuda_gpu_mem_time_sum)", "(cuda_gpu_mem_size_sum)"}) {
    EXPECT_NE(r.out.find(title), std::string::npos) << title;
  }
  // The seed's reading: one small gemm per iteration, a sync after each.
  EXPECT_NE(r.out.find("129"), std::string::npos);
}

}  // namespace
}  // namespace strata::testing
