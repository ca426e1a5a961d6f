// The PTX of the instruction sweep: a kernel whose code is larger than an
// SM's instruction caches, so that running it on every SM evicts the
// profiled kernel's instructions (and the constants cached with them), as
// ncu's flush before each pass does. On the H200, ncu's flushed runs stalled
// on instruction fetch ("No Instruction") 2-5x as often as strata's before
// this sweep, and the 4-block cuBLAS gemm had 7-11 % fewer SM active cycles
// (docs/PERFORMANCE.md, "Instruction caches and an empty L2").
//
// The PTX is written at run time rather than compiled in: 16,384 lines of
// one instruction would be half a megabyte in the agent. It is loaded with
// the JIT's optimization level 0 (cache_flush.cc), which keeps every
// instruction and compiles fastest.
#pragma once

#include <cstddef>
#include <string>

namespace strata::agent::kernels {

inline constexpr const char* kInstructionSweepEntry = "strata_instruction_sweep";
// Multiply-adds in the kernel body: 256 KB of code at 16 bytes per
// instruction (Volta and later), twice the largest per-SM instruction cache
// NVIDIA has described (128 KB), as the L2 sweep reads twice the L2.
inline constexpr size_t kInstructionSweepInstructions = 16384;

// The whole PTX module: one entry, strata_instruction_sweep(unsigned* sink),
// for sm_75 and later. Its chains of squarings depend on the thread's index,
// so no compiler can fold them; `sink` is written only if their final value
// is one particular number, which keeps the code alive at any level.
std::string instruction_sweep_ptx(size_t instructions = kInstructionSweepInstructions);

}  // namespace strata::agent::kernels
