#include "common/clock_pair.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/clock.h"

namespace strata {
namespace {

TEST(ClockPair, TheReadingLiesBetweenTheClocksReadAroundIt) {
  int64_t mono_before = monotonic_ns();
  int64_t real_before = realtime_ns();
  ClockPairReading pair = read_clock_pair();
  int64_t real_after = realtime_ns();
  int64_t mono_after = monotonic_ns();
  EXPECT_GE(pair.monotonic_ns, mono_before);
  EXPECT_LE(pair.monotonic_ns, mono_after);
  EXPECT_GE(pair.realtime_ns, real_before);
  EXPECT_LE(pair.realtime_ns, real_after);
  EXPECT_GE(pair.error_ns, 0);
  EXPECT_LE(pair.error_ns, mono_after - mono_before);
}

TEST(BootId, IsTheKernelsUuid) {
  if (!std::filesystem::exists("/proc/sys/kernel/random/boot_id")) {
    GTEST_SKIP() << "no /proc/sys/kernel/random/boot_id here";
  }
  std::string id = boot_id();
  EXPECT_EQ(id.size(), 36u);  // 8-4-4-4-12 hex digits, no newline
  EXPECT_EQ(id[8], '-');
  EXPECT_EQ(boot_id(), id);
}

}  // namespace
}  // namespace strata
