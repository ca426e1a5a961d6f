// strata occupancy's numeric flags refuse what is not a number in range
// (issue 21 item 10): NaN passes every comparison, CLI11 reads "nan" and
// "inf" as doubles, and dimensions multiply past 64 bits. Each is a usage
// error: exit 2, one line naming the flag, nothing on stdout.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"

namespace strata::testing {
namespace {

const std::string kLaunch = "occupancy --gpu h200 --block-size 256 --registers 32 ";

TEST(OccupancyNumbers, OutOfRangeMeasurementsAreRefused) {
  ScratchDir dir;
  struct Bad {
    std::string flags;
    std::string message;
  };
  for (const Bad& bad : {
           Bad{"--achieved-occupancy nan", "strata: --achieved-occupancy must be a percentage"},
           Bad{"--achieved-occupancy inf", "strata: --achieved-occupancy must be a percentage"},
           Bad{"--achieved-occupancy -1", "strata: --achieved-occupancy must be a percentage"},
           Bad{"--achieved-occupancy=-1", "strata: --achieved-occupancy must be a percentage"},
           Bad{"--achieved-occupancy 100.5", "strata: --achieved-occupancy must be a percentage"},
           Bad{"--achieved-occupancy 1e400", "strata: --achieved-occupancy must be a percentage"},
           Bad{"--achieved-warps nan", "strata: --achieved-warps must be from 0 to 64"},
           Bad{"--achieved-warps -inf", "strata: --achieved-warps must be from 0 to 64"},
           Bad{"--achieved-warps 65", "strata: --achieved-warps must be from 0 to 64"},
           Bad{"--sms 0", "strata: --sms must be from 1 to 1048576"},
           Bad{"--sms 2147483647", "strata: --sms must be from 1 to 1048576"},
           Bad{"--grid 9999999999x9999999999x9999999999", "strata: --grid '9999999999x"},
           Bad{"--grid 2147483647,65535,65535", "strata: --grid 2147483647,65535,65535 of blocks"},
       }) {
    auto r = run_strata(kLaunch + bad.flags, dir.path());
    EXPECT_EQ(r.status, 2) << bad.flags << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(bad.message, 0), 0u) << bad.flags << "\n" << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << bad.flags << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << bad.flags;
  }
  auto r = run_strata(
      "occupancy --gpu h200 --block-size 9999999999x9999999999x9999999999 --registers 32",
      dir.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("strata: --block-size '9999999999x", 0), 0u) << r.err;
}

TEST(OccupancyNumbers, TheRangesEndsAreAccepted) {
  ScratchDir dir;
  for (const std::string flags :
       {"--achieved-occupancy 0", "--achieved-occupancy 100", "--achieved-occupancy 37.5",
        "--achieved-warps 0", "--achieved-warps 64", "--sms 1", "--grid 2147483647"}) {
    auto r = run_strata(kLaunch + flags, dir.path());
    EXPECT_EQ(r.status, 0) << flags << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << flags;
  }
}

}  // namespace
}  // namespace strata::testing
