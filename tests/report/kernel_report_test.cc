// strata kernels' sections for the anchor launch (the first gemm of the
// seed's slow_loop_sync, as ncu measured it on the H200): every value ncu
// printed must come out the same, with its unit, in table, CSV and JSON, and
// the guidance ncu gives for it (grid smaller than the SMs, small grid,
// theoretical occupancy limited by registers, achieved far below theoretical).
#include "report/kernel_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "analysis/kernel_profile.h"
#include "anchor_kernel.h"

namespace strata::report {
namespace {

store::ProfiledLaunch anchor_launch(int64_t status = 0) {
  store::ProfiledLaunch l;
  l.pid = 4242;
  l.device = 0;
  l.correlation_id = 1003;
  l.invocation = 3;
  l.kernel_name = testing::kAnchorKernel;
  l.status = status;
  l.metrics = testing::anchor_launch_metrics();
  if (status == 0) {
    auto c = testing::anchor_counter_metrics();
    l.metrics.insert(l.metrics.end(), c.begin(), c.end());
  }
  return l;
}

// A details-page row: name, unit and value separated by runs of spaces.
bool has_row(const std::string& out, const std::string& name, const std::string& unit,
             const std::string& value) {
  auto quote = [](const std::string& s) {
    return std::regex_replace(s, std::regex(R"([.^$|()\[\]{}*+?\\/#%])"), R"(\$&)");
  };
  std::string pattern = "\\n    " + quote(name) + " +" + (unit.empty() ? "" : quote(unit) + " +") +
                        quote(value) + "\\n";
  return std::regex_search(out, std::regex(pattern));
}

struct Expected {
  const char* name;
  const char* unit;
  const char* value;
  const char* metric;
};

// ncu's output for the anchor launch (shared/reference/anchor-figures.md).
const Expected kAnchor[] = {
    {"DRAM Frequency", "Ghz", "3.19", "dram__cycles_elapsed.avg.per_second"},
    {"SM Frequency", "Ghz", "1.98", "gpc__cycles_elapsed.avg.per_second"},
    {"Elapsed Cycles", "cycle", "15,368", "gpc__cycles_elapsed.max"},
    {"Memory Throughput", "%", "1.90",
     "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
    {"DRAM Throughput", "%", "0.43", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
    {"Duration", "us", "7.78", "gpu__time_duration.sum"},
    {"L1/TEX Cache Throughput", "%", "19.91", "l1tex__throughput.avg.pct_of_peak_sustained_active"},
    {"L2 Cache Throughput", "%", "1.40", "lts__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"SM Active Cycles", "cycle", "1,462.67", "sm__cycles_active.avg"},
    {"Compute (SM) Throughput", "%", "1.64", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"Block Size", "", "64", "launch__block_size"},
    {"Grid Size", "", "16", "launch__grid_size"},
    {"Registers Per Thread", "register/thread", "80", "launch__registers_per_thread"},
    {"Shared Memory Configuration Size", "Kbyte", "135.17", "launch__shared_mem_config_size"},
    {"Driver Shared Memory Per Block", "Kbyte/block", "1.02",
     "launch__shared_mem_per_block_driver"},
    {"Dynamic Shared Memory Per Block", "Kbyte/block", "6.53",
     "launch__shared_mem_per_block_dynamic"},
    {"Static Shared Memory Per Block", "byte/block", "0", "launch__shared_mem_per_block_static"},
    {"# SMs", "SM", "132", "launch__sm_count"},
    {"Threads", "thread", "1,024", "launch__thread_count"},
    {"Waves Per SM", "", "0.01", "launch__waves_per_multiprocessor"},
    {"Block Limit Barriers", "block", "32", "launch__occupancy_limit_barriers"},
    {"Block Limit SM", "block", "32", "launch__occupancy_limit_blocks"},
    {"Block Limit Registers", "block", "12", "launch__occupancy_limit_registers"},
    {"Block Limit Shared Mem", "block", "17", "launch__occupancy_limit_shared_mem"},
    {"Block Limit Warps", "block", "32", "launch__occupancy_limit_warps"},
    {"Theoretical Active Warps per SM", "warp", "24", "sm__maximum_warps_avg_per_active_cycle"},
    {"Theoretical Occupancy", "%", "37.50", "sm__maximum_warps_per_active_cycle_pct"},
    {"Achieved Occupancy", "%", "3.12", "sm__warps_active.avg.pct_of_peak_sustained_active"},
    {"Achieved Active Warps Per SM", "warp", "2.00", "sm__warps_active.avg.per_cycle_active"},
};

TEST(KernelReport, AnchorTableHasNcuValues) {
  auto p = analysis::analyze_profiled_launch(anchor_launch());
  std::string out = render_kernel_profiles({p}, all_kernel_sections(), Format::kTable);
  EXPECT_EQ(out.rfind("  " + testing::kAnchorKernel +
                          " (16, 1, 1)x(64, 1, 1), Context 1, Stream 7, Device 0, CC 9.0, "
                          "Invocation 3\n",
                      0),
            0u)
      << out;
  for (const Expected& e : kAnchor) {
    EXPECT_TRUE(has_row(out, e.name, e.unit, e.value)) << e.name << " " << e.value << "\n" << out;
  }
  for (const char* section : {"    Section: GPU Speed Of Light Throughput\n",
                              "    Section: GPU and Memory Workload Distribution\n",
                              "    Section: Launch Statistics\n", "    Section: Occupancy\n"}) {
    EXPECT_NE(out.find(section), std::string::npos) << section;
  }
  // ncu's order of sections.
  EXPECT_LT(out.find("Speed Of Light"), out.find("Workload Distribution"));
  EXPECT_LT(out.find("Workload Distribution"), out.find("Section: Launch Statistics"));
  EXPECT_LT(out.find("Section: Launch Statistics"), out.find("Section: Occupancy"));
  EXPECT_TRUE(has_row(out, "Total SM Elapsed Cycles", "cycle", "2,028,576")) << out;
  EXPECT_TRUE(has_row(out, "Average L1 Active Cycles", "cycle", "1,250.50")) << out;
}

TEST(KernelReport, AnchorGuidanceNamesTheNumbers) {
  auto p = analysis::analyze_profiled_launch(anchor_launch());
  std::string out = render_kernel_profiles({p}, all_kernel_sections(), Format::kTable);
  // SOL: too small to fill the GPU, with the waves that say so.
  size_t sol = out.find("This kernel grid is too small to fill the available resources");
  ASSERT_NE(sol, std::string::npos) << out;
  EXPECT_LT(sol, out.find("Section: GPU and Memory Workload Distribution"));
  EXPECT_NE(out.find("0.01 full waves"), std::string::npos) << out;
  // Launch Statistics: 16 blocks on 132 SMs, 116 idle: up to 87.88%.
  EXPECT_NE(out.find("The grid of 16 blocks is smaller than the GPU's 132 multiprocessors"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("OPT   Est. Speedup: 87.88%"), std::string::npos) << out;
  // Occupancy: 37.5% limited by registers; achieved 3.1% is 34.4 points below.
  EXPECT_NE(out.find("limited by the number of required registers"), std::string::npos) << out;
  EXPECT_NE(out.find("achieved occupancy (3.1%) is 34.4 points below the theoretical 37.5%"),
            std::string::npos)
      << out;
}

TEST(KernelReport, AnchorJsonShape) {
  auto p = analysis::analyze_profiled_launch(anchor_launch());
  auto j = nlohmann::json::parse(render_kernel_profiles({p}, all_kernel_sections(), Format::kJson));
  ASSERT_EQ(j["kernels"].size(), 1u);
  const auto& k = j["kernels"][0];
  EXPECT_EQ(k["kernel"], testing::kAnchorKernel);
  EXPECT_EQ(k["mangled"], testing::kAnchorKernel);
  EXPECT_EQ(k["invocation"], 3);
  EXPECT_EQ(k["device"], 0);
  EXPECT_EQ(k["cc"], "9.0");
  EXPECT_EQ(k["grid"], nlohmann::json({16, 1, 1}));
  EXPECT_EQ(k["block"], nlohmann::json({64, 1, 1}));
  EXPECT_EQ(k["status"], 0);
  ASSERT_EQ(k["sections"].size(), 4u);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& s : k["sections"]) {
    for (const auto& m : s["metrics"]) by_name[m["name"]] = m;
  }
  for (const Expected& e : kAnchor) {
    ASSERT_TRUE(by_name.count(e.name)) << e.name;
    const auto& m = by_name[e.name];
    EXPECT_EQ(m["metric"], e.metric) << e.name;
    EXPECT_EQ(m["unit"], e.unit) << e.name;
    std::string digits = e.value;
    std::erase(digits, ',');
    EXPECT_DOUBLE_EQ(m["value"].get<double>(), std::stod(digits)) << e.name;
  }
  std::vector<std::string> rules;
  for (const auto& s : k["sections"]) {
    for (const auto& g : s["guidance"]) {
      rules.push_back(g["rule"]);
      EXPECT_FALSE(g["text"].get<std::string>().empty());
    }
  }
  EXPECT_EQ(rules,
            (std::vector<std::string>{"sol_small_grid", "grid_smaller_than_sms",
                                      "theoretical_occupancy_limited", "achieved_occupancy_gap"}));
}

TEST(KernelReport, AnchorCsvOneRowPerValue) {
  auto p = analysis::analyze_profiled_launch(anchor_launch());
  std::string csv = render_kernel_profiles({p}, all_kernel_sections(), Format::kCsv);
  std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find("\"Kernel Name\""), std::string::npos) << header;
  EXPECT_NE(header.find(
                "\"Invocation\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\""),
            std::string::npos)
      << header;
  EXPECT_NE(csv.find("\"GPU Speed Of Light Throughput\",\"Duration\",\"us\",\"7.78\""),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\"(64, 1, 1)\",\"(16, 1, 1)\",\"0\",\"9.0\",\"3\""), std::string::npos)
      << csv;
  size_t rows = std::count(csv.begin(), csv.end(), '\n') - 1;
  EXPECT_EQ(rows, std::size(kAnchor) + 10);  // + the 10 workload values
}

TEST(KernelReport, UnknownInvocationIsAQuestionMarkNotMinusOne) {
  // The agent's name table was full: it writes ~0, the store reads -1.
  store::ProfiledLaunch l = anchor_launch();
  l.invocation = -1;
  auto p = analysis::analyze_profiled_launch(l);
  std::string table = render_kernel_profiles({p}, all_kernel_sections(), Format::kTable);
  EXPECT_NE(table.find(", Invocation ?\n"), std::string::npos) << table.substr(0, 300);
  EXPECT_EQ(table.find("Invocation -1"), std::string::npos);
  auto j = nlohmann::json::parse(render_kernel_profiles({p}, all_kernel_sections(), Format::kJson));
  EXPECT_TRUE(j["kernels"][0]["invocation"].is_null());
  std::string csv = render_kernel_profiles({p}, all_kernel_sections(), Format::kCsv);
  EXPECT_EQ(csv.find("\"-1\""), std::string::npos);
}

TEST(KernelReport, SectionChoiceAndOrder) {
  auto p = analysis::analyze_profiled_launch(anchor_launch());
  auto only = parse_kernel_sections("occupancy,sol");
  ASSERT_TRUE(only.ok());
  std::string out = render_kernel_profiles({p}, *only, Format::kTable);
  EXPECT_NE(out.find("Section: GPU Speed Of Light Throughput"), std::string::npos);
  EXPECT_NE(out.find("Section: Occupancy"), std::string::npos);
  EXPECT_EQ(out.find("Section: Launch Statistics"), std::string::npos);
  EXPECT_EQ(out.find("Workload"), std::string::npos);
  auto bad = parse_kernel_sections("sol,memory");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "--section 'memory': unknown section (use sol, workload, launch, occupancy)");
  EXPECT_FALSE(parse_kernel_sections("").ok());
}

TEST(KernelReport, FailedCollectionPrintsReasonAndLaunchValues) {
  auto p = analysis::analyze_profiled_launch(anchor_launch(testing::kInsufficientPrivileges));
  std::string out = render_kernel_profiles({p}, all_kernel_sections(), Format::kTable);
  EXPECT_NE(out.find("    counters not collected: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
            std::string::npos)
      << out;
  // The nvidia module's real option, as the agent's own message names it.
  EXPECT_NE(out.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << out;
  EXPECT_EQ(out.find("Speed Of Light"), std::string::npos) << out;
  EXPECT_TRUE(has_row(out, "Theoretical Occupancy", "%", "37.50")) << out;
  EXPECT_TRUE(has_row(out, "Waves Per SM", "", "0.01")) << out;
  EXPECT_EQ(out.find("Achieved Occupancy"), std::string::npos) << out;
  auto j = nlohmann::json::parse(render_kernel_profiles({p}, all_kernel_sections(), Format::kJson));
  EXPECT_EQ(j["kernels"][0]["status"], 35);
  EXPECT_EQ(j["kernels"][0]["sections"].size(), 2u);
}

TEST(KernelReport, NoDeviceValuesFallsBackToTheGpuTableOrSaysWhy) {
  store::ProfiledLaunch l = anchor_launch();
  // Only the compute capability: the GPU table's sm_90 stands in, 132 SMs.
  std::erase_if(l.metrics, [](const auto& m) {
    return m.first.rfind("device__", 0) == 0 &&
           m.first.find("compute_capability") == std::string::npos;
  });
  auto p = analysis::analyze_profiled_launch(l);
  ASSERT_TRUE(p.occupancy.has_value()) << p.occupancy_error;
  EXPECT_EQ(p.occupancy->active_blocks, 12);
  std::erase_if(l.metrics, [](const auto& m) { return m.first.rfind("device__", 0) == 0; });
  auto none = analysis::analyze_profiled_launch(l);
  EXPECT_FALSE(none.occupancy.has_value());
  std::string out = render_kernel_profiles({none}, all_kernel_sections(), Format::kTable);
  EXPECT_NE(out.find("Launch Statistics and Occupancy not computed: no device limits"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Section: GPU Speed Of Light Throughput"), std::string::npos);
}

TEST(KernelReport, DurationUnitsScaleAsNcu) {
  auto with_duration = [](double ns) {
    store::ProfiledLaunch l = anchor_launch();
    for (auto& m : l.metrics) {
      if (m.first == "gpu__time_duration.sum") m.second = ns;
    }
    auto p = analysis::analyze_profiled_launch(l);
    return render_kernel_profiles({p}, all_kernel_sections(), Format::kTable);
  };
  EXPECT_TRUE(has_row(with_duration(960), "Duration", "ns", "960"));
  EXPECT_TRUE(has_row(with_duration(2'345'678), "Duration", "ms", "2.35"));
  EXPECT_TRUE(has_row(with_duration(1'000), "Duration", "us", "1"));
}

TEST(KernelReport, StatusNamesCoverTheAgentsPrivilegeAndDeviceErrors) {
  EXPECT_EQ(analysis::profile_status_name(35), "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  EXPECT_EQ(analysis::profile_status_name(40),
            "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES");
  EXPECT_EQ(analysis::profile_status_name(43), "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED");
  EXPECT_EQ(analysis::profile_status_name(1'000'002), "CUresult 2");
  EXPECT_EQ(analysis::profile_status_name(30), "CUptiResult 30");
}

}  // namespace
}  // namespace strata::report

namespace strata::report {
namespace {

TEST(KernelReport, AnalyzeProfiledLaunchesKeepsOrderAndEachAnalysis) {
  auto second = anchor_launch();
  second.invocation = 9;
  auto profiles = analysis::analyze_profiled_launches({anchor_launch(), second});
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].launch.invocation, 3);
  EXPECT_EQ(profiles[1].launch.invocation, 9);
  EXPECT_EQ(render_kernel_profiles({profiles[0]}, all_kernel_sections(), Format::kCsv),
            render_kernel_profiles({analysis::analyze_profiled_launch(anchor_launch())},
                                   all_kernel_sections(), Format::kCsv));
  EXPECT_TRUE(analysis::analyze_profiled_launches({}).empty());
}

}  // namespace
}  // namespace strata::report
