// `strata occupancy`: the offline occupancy calculator end to end: sections
// on stdout, one-line usage errors with exit status 2.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace strata::testing {
namespace {

TEST(OccupancyCli, SeedGemmSectionsAndGuidance) {
  // The seed tutorial's slow gemm on its 20-SM sm_86 GPU: ncu's numbers.
  ScratchDir dir;
  auto r = run_strata(
      "occupancy --gpu sm_86 --sms 20 --block-size 128 --registers 86 --smem-static 32K "
      "--grid 16",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("  what-if (16, 1, 1)x(128, 1, 1), Device sm_86 (as A10), CC 8.6\n", 0), 0u)
      << r.out;
  for (const char* line : {"    Section: Launch Statistics\n",
                           "    Shared Memory Configuration Size           Kbyte       102.40\n",
                           "    Static Shared Memory Per Block       Kbyte/block        32.77\n",
                           "    Waves Per SM                                             0.27\n",
                           "    Section: Occupancy\n",
                           "    Block Limit Registers                 block            5\n",
                           "    Block Limit Shared Mem                block            3\n",
                           "    Theoretical Occupancy                     %           25\n",
                           "    OPT   Est. Speedup: 20%\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(OccupancyCli, OccupancyOnlyWithoutGrid) {
  ScratchDir dir;
  auto r = run_strata("occupancy --gpu H200 --block-size 256 --registers 128", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("Launch Statistics"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    Block Limit Registers                 block            2\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    Theoretical Occupancy                     %           25\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("limited by the number of required registers"), std::string::npos) << r.out;
}

TEST(OccupancyCli, JsonAndCsv) {
  ScratchDir dir;
  auto r = run_strata(
      "occupancy --gpu h200 --block-size 64 --registers 80 --smem-dynamic 6528 "
      "--smem-config 132K --grid 16 --format json",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::map<std::string, double> value;
  for (const auto& m : j["metrics"]) {
    if (m["Metric Value"].is_number()) {
      value[m["Metric Name"].get<std::string>()] = m["Metric Value"].get<double>();
    }
  }
  // The anchor H200 launch: shared mem 17, registers 12, 37.5 %.
  EXPECT_EQ(value["Block Limit Shared Mem"], 17);
  EXPECT_EQ(value["Block Limit Registers"], 12);
  EXPECT_EQ(value["Theoretical Occupancy"], 37.5);
  EXPECT_DOUBLE_EQ(value["Shared Memory Configuration Size"], 135.168);
  EXPECT_FALSE(j["findings"].empty());

  auto csv =
      run_strata("occupancy --gpu h200 --block-size 64 --registers 80 --format csv", dir.path());
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("Section Name,Metric Name,Metric Unit,Metric Value\n", 0), 0u);
  // Guidance goes to stderr beside CSV.
  EXPECT_NE(csv.err.find("strata: OPT Occupancy: Est. Local Speedup: 62.5%."), std::string::npos)
      << csv.err;
}

TEST(OccupancyCli, CannotLaunchIsAnAnswerNotAnError) {
  ScratchDir dir;
  auto r = run_strata("occupancy --gpu sm_90 --block-size 1024 --registers 65", dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("WRN   This configuration cannot launch"), std::string::npos) << r.out;
}

TEST(OccupancyCli, BadFlagsAreOneLineUsageErrors) {
  ScratchDir dir;
  struct Bad {
    const char* args;
    const char* message;
  };
  for (const Bad& bad : {
           Bad{"occupancy --gpu h300 --block-size 256 --registers 32",
               "strata: --gpu: unknown GPU 'h300' (known: sm_70, sm_75, sm_80"},
           Bad{"occupancy --gpu h200 --block-size 0 --registers 32",
               "strata: --block-size must be at least 1 thread"},
           Bad{"occupancy --gpu h200 --block-size abc --registers 32",
               "strata: --block-size 'abc' is not a count"},
           Bad{"occupancy --gpu h200 --block-size 256 --registers 32 --smem-static 12Q",
               "strata: --smem-static '12Q' is not a size"},
           Bad{"occupancy --gpu h200 --block-size 256 --registers 32 --smem-config 50K",
               "strata: shared memory configuration 51200 bytes is not one H200 supports"},
           Bad{"occupancy --gpu h200 --block-size 256 --registers 32 --format xml",
               "strata: unknown --format 'xml'"},
           Bad{"occupancy --gpu h200 --block-size 256 --registers 32 --grid 0",
               "strata: --grid must be at least 1 block"},
           Bad{"occupancy --gpu h200 --block-size 256", "strata: "},
           Bad{"occupancy --gpu h200 --block-size 256 --registers x", "strata: "},
       }) {
    auto r = run_strata(bad.args, dir.path());
    EXPECT_EQ(r.status, 2) << bad.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(bad.message, 0), 0u) << bad.args << "\n" << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << bad.args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << bad.args;
  }
}

TEST(OccupancyCli, VersionListsTheVerb) {
  ScratchDir dir;
  auto r = run_strata("version", dir.path());
  ASSERT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("  occupancy "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace strata::testing
