// Frame-pointer unwinding inside a copied user stack: the fast option for
// code built with -fno-omit-frame-pointer. Guarded: every frame pointer must
// lie inside the stack copy, be 8-byte aligned and grow strictly upwards, so
// garbage in rbp ends the walk instead of producing frames from outside.
//
// Known limit of the method: when the sample hits a function's prologue or
// epilogue (rbp not yet or no longer its own), its caller is missing and the
// walk continues from the caller's caller.
//
// Threading: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "symbolize/types.h"

namespace strata::symbolize {

// pcs[0] is regs' ip; the others are return addresses. Stops at a null
// return address, at an rbp outside the copy, or after max_frames.
std::vector<uint64_t> unwind_fp(const UserRegs& regs, const StackCopy& stack, size_t max_frames);

}  // namespace strata::symbolize
