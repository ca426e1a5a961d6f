// Offline DWARF unwinding of copied user stacks and symbolization of the
// resulting pcs, with elfutils' libdwfl (what perf's util/unwind-libdw.c
// does, but with one Dwfl kept per address space instead of one per sample).
//
//   Symbolizer symbolizer;
//   UnwindResult u = symbolizer.unwind(space, regs, stack, 128);
//   for (size_t i = 0; i < u.pcs.size(); ++i)
//     frames = symbolizer.symbolize(space, u.pcs[i], /*return_address=*/i > 0);
//
// Caches: one Dwfl per distinct mapping list (reporting ELF files and
// parsing their CFI is the expensive part, done once); ELF files per
// path + build id; symbolized frames per (file, address) across address
// spaces. An AddressSpace object passed again is recognized by its address
// and its mappings' addresses alone (the per-sample fast path): after
// editing a mapping's path or build id in place, pass a new object.
// Debug information is found through the build id
// (/usr/lib/debug/.build-id), .gnu_debuglink (beside the binary, in .debug/,
// under /usr/lib/debug) and SymbolizerOptions::debug_dirs.
//
// Threading: a Symbolizer is not thread-safe (libdwfl's Dwfl is not); use one
// per thread. Ownership: it owns its Dwfl handles, open files and mappings,
// released on destruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "symbolize/types.h"

namespace strata::symbolize {

struct SymbolizerOptions {
  // Extra directories searched for separate debug files: DIR/<debuglink
  // name>, DIR/.build-id/xx/yyyy.debug and DIR/<binary's directory>/<name>.
  std::vector<std::string> debug_dirs;
  // Dwfl handles kept (one per distinct address space); least recently used
  // ones are dropped beyond this.
  size_t max_address_spaces = 32;
};

enum class UnwindStop {
  kEnd,             // the outermost frame (CFI marks the return address undefined)
  kMaxFrames,       // max_frames reached
  kStackTruncated,  // a read went past the end of the stack copy (dyn_size too small)
  kNoUnwindInfo,    // a pc outside every known module (JIT code, unreadable file)
  kError,           // anything else libdwfl reported; see UnwindResult::error
};

const char* unwind_stop_name(UnwindStop stop);

struct UnwindResult {
  // pcs[0] is the sampled ip; the others are return addresses (symbolize
  // them with return_address = true).
  std::vector<uint64_t> pcs;
  UnwindStop stop = UnwindStop::kEnd;
  std::string error;         // libdwfl's message when stop is kError or kNoUnwindInfo
  int trampoline_steps = 0;  // CPython perf trampolines stepped over
};

// Counters for reports ("survivable bad input is counted").
struct SymbolizerStats {
  uint64_t unwinds = 0;
  uint64_t dwfl_sessions = 0;  // Dwfl handles created
  uint64_t modules_reported = 0;
  uint64_t modules_missing = 0;  // mapped files that could not be opened as ELF
  uint64_t modules_stale = 0;    // files whose build id differs from the recorded one
  uint64_t trampoline_steps = 0;
  uint64_t symbol_cache_hits = 0;
  uint64_t symbol_cache_misses = 0;
};

class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions options = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Unwinds one sample with the CFI (.eh_frame, .debug_frame) of the mapped
  // files, stepping over CPython perf trampolines (symbolize/trampoline.h).
  // Always returns at least the ip when regs has one.
  UnwindResult unwind(const AddressSpace& space, const UserRegs& regs, const StackCopy& stack,
                      size_t max_frames);

  // The frames at pc, innermost inlined call first, the containing function
  // last. return_address: pc is a return address, so the call instruction
  // before it is looked up (pc - 1). Never empty: without symbols the frame
  // reads "module+0xoffset" (or "0xaddress" outside every mapping).
  std::vector<Frame> symbolize(const AddressSpace& space, uint64_t pc, bool return_address);

  // symbolize() for a whole unwound stack: element i holds the frames of
  // pcs[i], with pcs[0] taken as the sampled ip and the others as return
  // addresses.
  std::vector<std::vector<Frame>> symbolize_stack(const AddressSpace& space,
                                                  std::span<const uint64_t> pcs);

  const SymbolizerStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads /proc/PID/maps ("self" for pid 0) into an AddressSpace, and
// /tmp/perf-PID.map when it exists. For tests, the in-process sampler and
// `strata` runs where the target is still alive.
Result<AddressSpace> read_proc_maps(int pid);

// Demangles an Itanium C++ ABI name; returns it unchanged when it is not one.
std::string demangle(const std::string& name);

}  // namespace strata::symbolize
