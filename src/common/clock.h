// Clocks. strata timestamps CPU and GPU events on CLOCK_MONOTONIC (the clock
// CUPTI's timestamp callback is pointed at, so layers line up); wall-clock
// times (CLOCK_REALTIME) are kept only for run metadata.
#pragma once

#include <cstdint>
#include <ctime>

namespace strata {

inline int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace strata
