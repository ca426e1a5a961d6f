// What lets the traces of several processes (ranks of one job) be put on one
// time line: a CLOCK_REALTIME reading taken between two CLOCK_MONOTONIC
// readings, and the kernel's boot id (processes that see the same one share
// CLOCK_MONOTONIC, outside time namespaces, which offset it).
#pragma once

#include <cstdint>
#include <string>

namespace strata {

struct ClockPairReading {
  int64_t monotonic_ns = 0;  // the midpoint of the two monotonic readings
  int64_t realtime_ns = 0;
  int64_t error_ns = 0;  // at most how far monotonic_ns is from the realtime reading's moment
};

// The tightest pair of a few tries: the realtime reading lies within the
// monotonic pair, so taking their midpoint as "the same moment" is off by at
// most half their gap.
ClockPairReading read_clock_pair();

// /proc/sys/kernel/random/boot_id; "" when it cannot be read.
std::string boot_id();

}  // namespace strata
