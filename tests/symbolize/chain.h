// Known call chains for the unwinding tests, compiled -O2 -g without frame
// pointers (see CMakeLists.txt). Each chain captures its own registers and a
// copy of its stack at the innermost point, as the kernel does for a
// PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER sample. Lines that the tests
// check are tagged "MARK:name" in chain.cc.
//
// Threading: the capture goes to one global; run chains from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "symbolize/types.h"

namespace strata::symbolize::testing {

struct Captured {
  UserRegs regs;
  std::vector<uint8_t> stack;  // from regs.sp() upwards
  StackCopy view() const { return StackCopy{regs.sp(), stack}; }
};

// The most recent capture of any chain below.
const Captured& last_capture();

// main -> test -> chain_a -> chain_b -> chain_b_helper (inlined) -> chain_c.
int chain_a(int x);
// test -> sort_and_capture -> qsort (libc) -> ... -> compare_and_capture.
int sort_and_capture();
// test -> call_through_trampoline -> code (a copy of CPython's perf
// trampoline in anonymous executable memory) -> trampoline_callee.
// Returns the code's address, or 0 when executable memory is refused.
uint64_t call_through_trampoline(const uint8_t* code, size_t size);

// The address of chain_c's capture point (for symbolization checks).
uint64_t chain_c_capture_pc();

}  // namespace strata::symbolize::testing
