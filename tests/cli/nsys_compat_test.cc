// Compatibility both ways, on real captures (tests/data/README.md): strata's
// GPU reports on an Nsight Systems export print exactly what `nsys stats`
// printed for it, and `nsys stats` run on strata's own traces printed exactly
// what strata prints for them.
#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

#include "cli_runner.h"
#include "export/registry.h"
#include "report/registry.h"

namespace strata::testing {
namespace {

const std::string kDir = STRATA_TEST_DATA "/nsys-gpu_matmul-slow";

// The CSV rows nsys printed for `report` into DIR/nsys-stats.csv, blank lines dropped.
std::string nsys_section(const std::string& dir, const std::string& report) {
  std::istringstream in(read_file(dir + "/nsys-stats.csv"));
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
  auto r = run_strata(
      "report '" + kDir + "/gpu_matmul_slow.sqlite' --report " + report + " --format csv",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::string expected = nsys_section(kDir, report);
  ASSERT_FALSE(expected.empty()) << "no " << report << " section in nsys-stats.csv";
  EXPECT_EQ(without_blank_lines(r.out), expected);
}

INSTANTIATE_TEST_SUITE_P(GpuMatmulSlow, NsysCompat,
                         ::testing::Values("cuda_api_sum", "cuda_gpu_kern_sum",
                                           "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                                           "nvtx_sum", "cuda_kern_exec_sum"));

// nsys stats on strata's traces of gpu_matmul (strata trace on the H200).
class NsysReadsStrata : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(NsysReadsStrata, NsysStatsPrintedWhatStrataPrints) {
  ScratchDir dir;
  auto [mode, report] = GetParam();
  std::string trace_dir = std::string(STRATA_TEST_DATA "/trace-gpu_matmul-") + mode;
  auto r = run_strata(
      "report '" + trace_dir + "/trace.sqlite' --report " + report + " --format csv", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::string expected = nsys_section(trace_dir, report);
  ASSERT_FALSE(expected.empty()) << "no " << report << " section in nsys-stats.csv";
  EXPECT_EQ(without_blank_lines(r.out), expected);
}

INSTANTIATE_TEST_SUITE_P(GpuMatmul, NsysReadsStrata,
                         ::testing::Combine(::testing::Values("slow_loop_sync", "batched"),
                                            ::testing::Values("cuda_api_sum",
                                                              "cuda_gpu_kern_sum")));

TEST(NsysReadsStrata, SlowModeShowsTheSeedsReading) {
  // Case 2 of the tutorial: one tiny gemm per tile and a sync after each.
  ScratchDir dir;
  auto r = run_strata(std::string("report '") + STRATA_TEST_DATA +
                          "/trace-gpu_matmul-slow_loop_sync/trace.sqlite' --report "
                          "cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum --format csv",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(",129,"), std::string::npos) << r.out;  // 128 tiles + 1 warm-up
  EXPECT_NE(r.out.find("cudaDeviceSynchronize"), std::string::npos);
  EXPECT_NE(r.out.find(",128,"), std::string::npos) << "128 NVTX ranges: " << r.out;
}

TEST(NsysCompat, UnknownReportIsAUsageError) {
  ScratchDir dir;
  auto r =
      run_strata("report '" + kDir + "/gpu_matmul_slow.sqlite' --report cuda_nope", dir.path());
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

// The names of report/registry.h are what the CLI accepts: each one prints its
// report, and anything else is refused with the registry's list.
namespace strata::testing {
namespace {

TEST(ReportRegistryCli, EveryRegisteredGpuReportIsAccepted) {
  ScratchDir dir;
  for (const auto& name : report::report_names(report::ReportInput::kGpuTables)) {
    auto r =
        run_strata("report '" + kDir + "/gpu_matmul_slow.sqlite' --report " + name, dir.path());
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_NE(r.out.find("(" + name + "):"), std::string::npos) << name << ": " << r.out;
  }
}

TEST(ReportRegistryCli, UnknownReportIsRefusedWithTheKnownList) {
  ScratchDir dir;
  for (const char* name : {"cuda_nope", "rank_sum", "Nvtx_sum"}) {
    auto r =
        run_strata("report '" + kDir + "/gpu_matmul_slow.sqlite' --report " + name, dir.path());
    EXPECT_EQ(r.status, 2) << name;
    EXPECT_EQ(r.err, "strata: unknown --report '" + std::string(name) + "' (known: " +
                         report::known_reports(report::ReportInput::kGpuTables) + ")\n");
    EXPECT_EQ(r.out, "");
  }
}

TEST(ExportRegistryCli, EveryRegisteredFormatIsAcceptedAndOthersRefused) {
  ScratchDir dir;
  for (const auto& e : exporter::export_registry()) {
    std::string file = e.input == exporter::ExportInput::kCpuProfile
                           ? STRATA_TEST_DATA "/cpu-cpu_hotspot-slow/trace.sqlite"
                           : kDir + "/gpu_matmul_slow.sqlite";
    auto r = run_strata("export '" + file + "' --format " + e.name + " -o -", dir.path());
    EXPECT_EQ(r.status, 0) << e.name << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << e.name;
  }
  auto r = run_strata("export '" + kDir + "/gpu_matmul_slow.sqlite' --format xml -o -", dir.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "strata: unknown export --format 'xml' (use " + exporter::export_names() + ")\n");
}

}  // namespace
}  // namespace strata::testing
