#include "common/clock_pair.h"

#include <cstdint>
#include <fstream>

#include "common/clock.h"

namespace strata {

ClockPairReading read_clock_pair() {
  ClockPairReading best;
  int64_t best_gap = INT64_MAX;
  for (int i = 0; i < 5; ++i) {
    int64_t m1 = monotonic_ns();
    int64_t r = realtime_ns();
    int64_t m2 = monotonic_ns();
    if (m2 - m1 < best_gap) {
      best_gap = m2 - m1;
      best.monotonic_ns = m1 + (m2 - m1) / 2;
      best.realtime_ns = r;
      best.error_ns = (m2 - m1 + 1) / 2;
    }
  }
  return best;
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace strata
