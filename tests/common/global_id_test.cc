#include "common/global_id.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(GlobalId, RoundTripsPidAndTid) {
  int64_t g = global_id::make_tid(4242, 4250);
  EXPECT_EQ(g, (int64_t{4242} << 24) | 4250);  // nsys's layout
  EXPECT_EQ(global_id::pid_of(g), 4242);
  EXPECT_EQ(global_id::tid_of(g), 4250);
  EXPECT_EQ(global_id::process_of(g), global_id::make_pid(4242));
}

TEST(GlobalId, ProcessKeepsTheHardwareAndVmBits) {
  // nsys exports may set bits above the pid; two processes with the same pid
  // on different VMs must stay apart.
  int64_t high = int64_t{3} << 48;
  int64_t g = high | global_id::make_tid(7, 9);
  EXPECT_EQ(global_id::pid_of(g), 7);
  EXPECT_EQ(global_id::tid_of(g), 9);
  EXPECT_EQ(global_id::process_of(g), high | global_id::make_pid(7));
  EXPECT_NE(global_id::process_of(g), global_id::make_pid(7));
}

TEST(GlobalId, FieldsAreMaskedTo24Bits) {
  // A tid beyond 24 bits must not spill into the pid field.
  int64_t g = global_id::make_tid(1, (int64_t{1} << 24) + 5);
  EXPECT_EQ(global_id::pid_of(g), 1);
  EXPECT_EQ(global_id::tid_of(g), 5);
}

}  // namespace
}  // namespace strata
