// report/registry.h: every name once, each runner gives the report it is
// named for, and the lists the CLI prints come from the table.
#include "report/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace strata::report {
namespace {

TEST(ReportRegistry, NamesAreUnique) {
  std::set<std::string> seen;
  for (const auto& e : report_registry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name;
    EXPECT_NE(std::string(e.help), "") << e.name;
  }
  EXPECT_EQ(seen.size(), 12u);
}

TEST(ReportRegistry, EveryEntryRunsTheReportOfItsName) {
  store::GpuTables tables;
  analysis::MultiRankResult ranks = analysis::analyze_ranks({});
  for (const auto& e : report_registry()) {
    SCOPED_TRACE(e.name);
    const std::string tag = std::string("(") + e.name + "):";
    switch (e.input) {
      case ReportInput::kGpuTables:
        ASSERT_NE(e.from_tables, nullptr);
        EXPECT_EQ(e.from_ranks, nullptr);
        EXPECT_NE(e.from_tables(tables, "t.sqlite", {}).table.title.find(tag), std::string::npos);
        break;
      case ReportInput::kRanks:
        ASSERT_NE(e.from_ranks, nullptr);
        EXPECT_EQ(e.from_tables, nullptr);
        EXPECT_NE(e.from_ranks({ranks, {}, 0}).table.title.find(tag), std::string::npos);
        break;
      case ReportInput::kKernelProfiles:
        EXPECT_EQ(e.from_tables, nullptr);
        EXPECT_EQ(e.from_ranks, nullptr);
        break;
    }
  }
}

TEST(ReportRegistry, FindAcceptsEveryNameUnderItsInputOnly) {
  for (const auto& e : report_registry()) {
    for (auto input :
         {ReportInput::kGpuTables, ReportInput::kKernelProfiles, ReportInput::kRanks}) {
      const ReportEntry* found = find_report(e.name, input);
      if (input == e.input) {
        EXPECT_EQ(found, &e) << e.name;
      } else {
        EXPECT_EQ(found, nullptr) << e.name;
      }
    }
  }
  EXPECT_EQ(find_report("cuda_nope", ReportInput::kGpuTables), nullptr);
  EXPECT_EQ(find_report("", ReportInput::kRanks), nullptr);
}

TEST(ReportRegistry, KnownListsAreTheMessagesOfTheCli) {
  EXPECT_EQ(known_reports(ReportInput::kGpuTables),
            "cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_size_sum, cuda_gpu_mem_time_sum, "
            "cuda_kern_exec_sum, diagnosis, nvtx_sum, op_sum");
  EXPECT_EQ(known_reports(ReportInput::kRanks), "rank_sum, collective_sum, straggler_sum");
  EXPECT_EQ(report_names(ReportInput::kKernelProfiles), std::vector<std::string>{"kernels"});
}

TEST(ReportRegistry, DefaultSetIsNsysStatsOrder) {
  EXPECT_EQ(default_gpu_reports(),
            (std::vector<std::string>{"nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum",
                                      "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"}));
}

TEST(ReportRegistry, HelpNamesEveryReport) {
  std::string help = report_flag_help();
  EXPECT_EQ(help,
            "GPU reports: cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, "
            "cuda_gpu_mem_size_sum, cuda_kern_exec_sum, nvtx_sum, op_sum, diagnosis, kernels (the "
            "sections of strata kernels); with several files: rank_sum, collective_sum, "
            "straggler_sum");
  for (const auto& e : report_registry()) EXPECT_NE(help.find(e.name), std::string::npos);
}

}  // namespace
}  // namespace strata::report
