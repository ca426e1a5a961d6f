// Unwinding through CPython's perf trampolines (python -X perf, 3.12+).
//
// Each Python code object gets a copy of _Py_trampoline_func_start in
// anonymous executable memory, listed in /tmp/perf-PID.map as
// `py::qualname:file`. The copy has no CFI, and the code bytes of anonymous
// memory are not in the sample, so libdwfl stops there (or, worse, its
// x86-64 frame-pointer fallback reads a garbage rbp). The code is fixed,
// though (Python/asm_trampoline.S), so the frame layout follows from the pc's
// offset in the copy and the copy's size, which the map line gives:
//
//   CPython 3.12, 3.13:                  CPython 3.14+ (frame-pointer variant):
//     [endbr64]        f3 0f 1e fa         [endbr64]        f3 0f 1e fa
//     sub $8,%rsp      48 83 ec 08         push %rbp        55
//     call *%rcx       ff d1               mov %rsp,%rbp    48 89 e5
//     add $8,%rsp      48 83 c4 08         call *%rcx       ff d1
//     ret              c3                  pop %rbp         5d
//                                          ret              c3
//   size 11, or 15 with endbr64          size 8, or 12 with endbr64
//
// endbr64 is there when CPython was built with -fcf-protection (__CET__), so
// the size tells the variants apart, and an entry of any other size is not a
// trampoline we know. In both, while the evaluator runs (the pc is the return
// address after the call), the caller's return address is at [rsp+8] and the
// caller's rsp is rsp+16; the 3.14 variant also saved the caller's rbp at
// [rsp]. The trampoline touches no other callee-saved register.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "symbolize/perf_map.h"
#include "symbolize/types.h"

namespace strata::symbolize {

enum class TrampolineKind { kNone, kSubRsp, kPushRbp };

// Which trampoline layout an entry of the perf map has, from its name
// (`py::`) and size.
TrampolineKind trampoline_kind(const PerfMapEntry& entry);

// Reads the 8-byte word at an address of the sampled process; false when the
// address is not in the stack copy.
using ReadWord = std::function<bool(uint64_t addr, uint64_t* value)>;

// The registers of the trampoline's caller, given the registers of a frame
// whose pc lies in the trampoline `entry`. `leaf` says the pc is the sampled
// instruction itself (the first frame), not a return address: then any
// instruction boundary is possible; otherwise only the return address after
// the call is. nullopt when the pc fits no instruction of the layout or a
// stack word cannot be read.
std::optional<UserRegs> trampoline_step(const PerfMapEntry& entry, const UserRegs& regs, bool leaf,
                                        const ReadWord& read);

}  // namespace strata::symbolize
