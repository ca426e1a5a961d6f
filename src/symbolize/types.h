// Input types of offline unwinding and symbolization: what the sampler
// records per process and per sample (shared/DESIGN.md, Sampler), in a form
// that does not depend on perf_event_open's structs.
//
// Threading: plain values; no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "symbolize/perf_map.h"

namespace strata::symbolize {

// One file-backed (or anonymous) mapping of a process, as an MMAP2 record or
// a /proc/PID/maps line gives it. [start, end) is half-open.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t pgoff = 0;    // file offset of `start`
  std::string path;      // "" or "//anon" for anonymous memory, "[vdso]", "[stack]", ...
  std::string build_id;  // lowercase hex when the record carried one; "" when unknown
  bool executable = true;
};

// The mappings of one process at one moment: a snapshot. Records are applied
// in order: a later mapping replaces the overlapping parts of earlier ones
// (an munmap+mmap, an exec: pass a fresh AddressSpace after exec).
struct AddressSpace {
  int pid = 0;
  std::vector<Mapping> mappings;
  // /tmp/perf-PID.map of the process (CPython -X perf, other JITs); empty
  // when the process wrote none.
  PerfMap perf_map;
};

// x86-64 DWARF register numbers (System V psABI, figure 3.36), which
// libdwfl's dwfl_thread_state_registers takes.
enum DwarfReg : int {
  kRax = 0,
  kRdx = 1,
  kRcx = 2,
  kRbx = 3,
  kRsi = 4,
  kRdi = 5,
  kRbp = 6,
  kRsp = 7,
  kR8 = 8,
  kR9 = 9,
  kR10 = 10,
  kR11 = 11,
  kR12 = 12,
  kR13 = 13,
  kR14 = 14,
  kR15 = 15,
  kRip = 16,
};
inline constexpr int kNumDwarfRegs = 17;

// The user registers of one sample, by DWARF number; `valid` has bit i set
// when regs[i] holds a value. Unwinding needs at least rip and rsp; the
// callee-saved rbx, rbp and r12-r15 let CFI recover the callers' values.
struct UserRegs {
  std::array<uint64_t, kNumDwarfRegs> regs{};
  uint32_t valid = 0;

  void set(DwarfReg reg, uint64_t value) {
    regs[reg] = value;
    valid |= 1u << reg;
  }
  bool has(DwarfReg reg) const { return (valid >> reg) & 1u; }
  uint64_t get(DwarfReg reg) const { return regs[reg]; }
  uint64_t ip() const { return regs[kRip]; }
  uint64_t sp() const { return regs[kRsp]; }
};

// Builds UserRegs from a PERF_SAMPLE_REGS_USER payload: `values` holds one
// u64 per bit set in `sample_regs_user`, in ascending bit order, bits being
// perf's PERF_REG_X86_* numbers (AX=0 BX CX DX SI DI BP SP IP=8 FLAGS CS SS
// DS ES FS GS R8=16 ... R15=23). Extra values are ignored; missing ones leave
// their registers invalid.
UserRegs from_perf_regs(uint64_t sample_regs_user, std::span<const uint64_t> values);

// The copy of the user stack the kernel made at sample time
// (PERF_SAMPLE_STACK_USER): bytes[0] is the byte at address `sp`; only
// dyn_size bytes are meaningful, so pass that many.
struct StackCopy {
  uint64_t sp = 0;
  std::span<const uint8_t> bytes;

  bool contains(uint64_t addr, uint64_t len) const {
    return addr >= sp && len <= bytes.size() && addr - sp <= bytes.size() - len;
  }
};

// One symbolized frame. symbolize() returns the innermost inlined frames
// first, then the function that contains them.
struct Frame {
  std::string function;      // demangled; "module+0x1f3a" when no symbol is known
  std::string raw_function;  // the linkage (mangled) name; "" when no symbol is known
  std::string file;          // source file, "" when there is no line information
  int line = 0;
  int column = 0;
  // Where the function (or inlined function) is defined, from DW_AT_decl_*:
  // profiles group samples per function under this line, as pstats does.
  std::string decl_file;  // "" when unknown
  int decl_line = 0;
  std::string module;          // path of the mapped file; perf map regions: "[perf-PID.map]"
  uint64_t module_offset = 0;  // address in the ELF's own address space (what addr2line takes)
  bool inlined = false;        // an inlined call site inside the next frame
  bool has_symbol = false;     // false: `function` is the module+offset fallback
};

}  // namespace strata::symbolize
