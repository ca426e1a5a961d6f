// Launch Statistics and Occupancy in Nsight Compute's layout, checked against
// the seed tutorial's ncu output for ampere_sgemm_32x32_sliced1x4_tn on its
// 20-SM sm_86 GPU (same names, units, column layout; ncu's single-value page
// prints integers whole and the rest with two decimals).
#include "report/kernel_sections.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/gpu_specs.h"

namespace strata::report {
namespace {

struct Case {
  analysis::DeviceProps device;
  analysis::KernelLaunch launch;
  analysis::OccupancyResult occupancy;
  KernelSectionsReport report;
};

Case make(const char* gpu, int sms, analysis::KernelLaunch k) {
  Case c;
  c.device = *analysis::find_gpu(gpu);
  if (sms > 0) c.device.sm_count = sms;
  c.launch = k;
  c.occupancy = *analysis::compute_occupancy(c.device, k);
  c.report = kernel_sections(c.device, k, c.occupancy,
                             analysis::launch_findings(c.device, k, c.occupancy));
  return c;
}

Case seed_slow_gemm() {
  analysis::KernelLaunch k;
  k.block_size = 128;
  k.registers_per_thread = 86;
  k.static_smem = 32768;
  k.grid_size = 16;
  return make("sm_86", 20, k);
}

// The text with line breaks and indentation collapsed to single spaces, to
// find a sentence wherever the wrapping put its breaks.
std::string flat(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == ' ') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(KernelSections, SeedGemmInNcuLayout) {
  std::string out = render_kernel_sections(seed_slow_gemm().report, Format::kTable);
  // Metric names, units and values of the seed's ncu output (which printed
  // 128.00, 2,048.00 ... as averages over one launch).
  const std::string launch_statistics =
      "    Section: Launch Statistics\n"
      "    -------------------------------- --------------- ------------\n"
      "    Metric Name                          Metric Unit Metric Value\n"
      "    -------------------------------- --------------- ------------\n"
      "    Block Size                                                128\n"
      "    Grid Size                                                  16\n"
      "    Registers Per Thread             register/thread           86\n"
      "    Shared Memory Configuration Size           Kbyte       102.40\n"
      "    Driver Shared Memory Per Block       Kbyte/block         1.02\n"
      "    Dynamic Shared Memory Per Block       byte/block            0\n"
      "    Static Shared Memory Per Block       Kbyte/block        32.77\n"
      "    # SMs                                         SM           20\n"
      "    Threads                                   thread        2,048\n"
      "    Waves Per SM                                             0.27\n"
      "    -------------------------------- --------------- ------------\n"
      "\n";
  const std::string occupancy =
      "    Section: Occupancy\n"
      "    ------------------------------- ----------- ------------\n"
      "    Metric Name                     Metric Unit Metric Value\n"
      "    ------------------------------- ----------- ------------\n"
      "    Block Limit SM                        block           16\n"
      "    Block Limit Registers                 block            5\n"
      "    Block Limit Shared Mem                block            3\n"
      "    Block Limit Warps                     block           12\n"
      "    Theoretical Active Warps per SM        warp           12\n"
      "    Theoretical Occupancy                     %           25\n"
      "    ------------------------------- ----------- ------------\n"
      "\n";
  ASSERT_EQ(out.rfind(launch_statistics, 0), 0u) << out;
  EXPECT_NE(out.find(occupancy), std::string::npos) << out;

  // Guidance: 16 blocks on 20 SMs leaves 4 idle (20 %); 25 % occupancy,
  // limited by shared memory, bounds the local gain at 75 %.
  EXPECT_NE(out.find("    OPT   Est. Speedup: 20%\n          The grid of 16 blocks is smaller "
                     "than the GPU's 20 multiprocessors, so 4 of them"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    OPT   Est. Local Speedup: 75%\n"), std::string::npos) << out;
  EXPECT_NE(flat(out).find("The theoretical occupancy (25.0%) is limited by the required amount "
                           "of shared memory."),
            std::string::npos)
      << out;
  // The grid finding comes under Launch Statistics, the occupancy one under
  // Occupancy.
  EXPECT_LT(out.find("Est. Speedup: 20%"), out.find("Section: Occupancy"));
  EXPECT_GT(out.find("Est. Local Speedup: 75%"), out.find("Section: Occupancy"));
  for (const auto& line : lines_of(out)) {
    EXPECT_LE(line.size(), 100u) << line;
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing space: '" << line << "'";
  }
}

TEST(KernelSections, OccupancyOnlyWithoutGrid) {
  analysis::KernelLaunch k;
  k.block_size = 256;
  k.registers_per_thread = 32;
  auto c = make("h200", 0, k);
  EXPECT_FALSE(c.report.launch_statistics);
  std::string out = render_kernel_sections(c.report, Format::kTable);
  EXPECT_EQ(out.find("Launch Statistics"), std::string::npos) << out;
  // sm_90 shows Block Limit Barriers first (32 as ncu shows it), and 100 %.
  EXPECT_NE(out.find("    Block Limit Barriers                  block           32\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    Theoretical Active Warps per SM        warp           64\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    Theoretical Occupancy                     %          100\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("Achieved"), std::string::npos);
  EXPECT_EQ(out.find("OPT"), std::string::npos) << out;
}

TEST(KernelSections, AchievedRowsOnlyWhenMeasured) {
  analysis::KernelLaunch k;
  k.block_size = 256;
  k.registers_per_thread = 16;
  k.grid_size = 3225;
  k.smem_config = 32 * 1024;
  k.cache_config = "CachePreferNone";
  k.achieved_occupancy_pct = 50.14;
  k.achieved_active_warps = 32.09;
  std::string out = render_kernel_sections(make("h100", 0, k).report, Format::kTable);
  // ncu's H100 output for this launch: config 32.77 KB, waves 3.05, a tail
  // of 25 % and an occupancy gap of 49.86 %.
  EXPECT_NE(out.find("    Function Cache Configuration                     CachePreferNone\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Shared Memory Configuration Size           Kbyte           32.77\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Threads                                   thread         825,600\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Waves Per SM                                                3.05\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Achieved Occupancy                        %        50.14\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Achieved Active Warps Per SM           warp        32.09\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    OPT   Est. Speedup: 25%\n"), std::string::npos) << out;
  EXPECT_NE(flat(out).find("3 full waves and a partial wave of 57 blocks"), std::string::npos)
      << out;
  EXPECT_NE(out.find("    OPT   Est. Local Speedup: 49.86%\n"), std::string::npos) << out;
}

TEST(KernelSections, CsvHasNcuColumnNames) {
  std::string csv = render_kernel_sections(seed_slow_gemm().report, Format::kCsv);
  auto lines = lines_of(csv);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "Section Name,Metric Name,Metric Unit,Metric Value");
  EXPECT_NE(csv.find("\nLaunch Statistics,Waves Per SM,,0.27\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nOccupancy,Theoretical Occupancy,%,25\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nLaunch Statistics,Threads,thread,\"2,048\"\n"), std::string::npos) << csv;
  auto notes = findings_text(seed_slow_gemm().report);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].rfind("OPT Launch Statistics: Est. Speedup: 20%. The grid of 16", 0), 0u)
      << notes[0];
}

TEST(KernelSections, JsonHasExactNumbersAndFindings) {
  auto j = nlohmann::json::parse(render_kernel_sections(seed_slow_gemm().report, Format::kJson));
  ASSERT_TRUE(j.contains("metrics"));
  ASSERT_TRUE(j.contains("findings"));
  bool saw_config = false, saw_waves = false;
  for (const auto& m : j["metrics"]) {
    if (m["Metric Name"] == "Shared Memory Configuration Size") {
      EXPECT_EQ(m["Metric Unit"], "Kbyte");
      EXPECT_DOUBLE_EQ(m["Metric Value"].get<double>(), 102.4);
      saw_config = true;
    }
    if (m["Metric Name"] == "Waves Per SM") {
      EXPECT_NEAR(m["Metric Value"].get<double>(), 16.0 / 60, 1e-12);
      saw_waves = true;
    }
  }
  EXPECT_TRUE(saw_config && saw_waves);
  ASSERT_EQ(j["findings"].size(), 2u);
  EXPECT_EQ(j["findings"][0]["Rule"], "grid_smaller_than_sms");
  EXPECT_EQ(j["findings"][0]["Section Name"], "Launch Statistics");
  EXPECT_DOUBLE_EQ(j["findings"][0]["Est. Speedup (%)"].get<double>(), 20.0);
  EXPECT_EQ(j["findings"][1]["Rule"], "theoretical_occupancy_limited");
  EXPECT_EQ(j["findings"][1]["Speedup Type"], "local");
}

TEST(KernelSections, EveryFindingHasWords) {
  // A launch that trips most rules: 48 threads, 64 KB dynamic shared memory
  // (opt-in), 255 registers, a grid below the SM count; and one that cannot
  // launch.
  analysis::KernelLaunch k;
  k.block_size = 48;
  k.registers_per_thread = 255;
  k.dynamic_smem = 64 * 1024;
  k.grid_size = 7;
  auto c = make("sm_90", 0, k);
  ASSERT_GE(c.report.findings.size(), 4u);
  for (const auto& f : c.report.findings) {
    EXPECT_FALSE(finding_message(f).empty()) << finding_rule_id(f.kind);
    EXPECT_NE(finding_rule_id(f.kind), "unknown");
  }
  std::string out = render_kernel_sections(c.report, Format::kTable);
  EXPECT_NE(out.find("    INF   Each block uses 65536 bytes of shared memory"), std::string::npos)
      << out;
  EXPECT_NE(flat(out).find("the last of its 2 warps has 16 lanes masked off"), std::string::npos)
      << out;

  analysis::KernelLaunch bad;
  bad.block_size = 1024;
  bad.registers_per_thread = 65;
  auto b = make("sm_90", 0, bad);
  std::string out2 = render_kernel_sections(b.report, Format::kTable);
  EXPECT_NE(
      out2.find("    WRN   This configuration cannot launch: the block needs 73728 registers"),
      std::string::npos)
      << out2;
  EXPECT_NE(out2.find("Theoretical Occupancy                     %            0\n"),
            std::string::npos)
      << out2;
}

TEST(KernelSections, HeaderLine) {
  auto c = seed_slow_gemm();
  EXPECT_EQ(kernel_header_line("what-if", c.device, c.launch),
            "  what-if (16, 1, 1)x(128, 1, 1), Device sm_86 (as A10), CC 8.6\n");
}

}  // namespace
}  // namespace strata::report
