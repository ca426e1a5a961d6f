// The in-process sampler's records, shared by libstrata_sigprof.so (which
// writes them) and the CLI's reader (docs/sampler-fallback.md has the prose).
//
// Transport: one spool per process image (sigprof-PID.bin, or
// sigprof-PID.N.bin after an exec kept the pid), in the ordinary spool format
// of src/format. Thread names and the process's pid/ppid/exe/argv use the
// spool's own kThreadName and kProcessInfo chunks. Samples, /proc/self/maps
// snapshots and the sampler's counters travel in chunks of kind
// kCuptiBuffer whose first u32 (the CUPTI version field) is kSigprofTag:
// spool format 1.0 has no kind for them, a reader of 1.0 hands out only known
// kinds, and these spools live in a private directory that only the reader in
// sampler/inprocess/ reads. A record whose tag is anything else is an error,
// so a CUPTI buffer can never be mistaken for samples.
//
// Record layout (little-endian, every field at a fixed offset):
//   u32 tag (kSigprofTag), u32 RecordKind, then the kind's body:
//   kSamples:  u32 tid, u32 count, then count samples, each
//              u64 time (CLOCK_MONOTONIC ns), u32 overruns (timer periods
//              that elapsed beyond the one this sample stands for), u32
//              stack_size, u64 regs[kRegsPerSample] (perf register order,
//              sampler::kDwarfRegsMask), stack_size bytes from sp upwards,
//              zero padding to a multiple of 8.
//   kMaps:     u64 time, then the text of /proc/self/maps.
//   kCounters: u32 hz, u32 stack_bytes, then kNumCounters u64 totals
//              (cumulative for the process image: a later record supersedes).
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::sampler::sigprof {

// "SGPF" read as a little-endian u32.
inline constexpr uint32_t kSigprofTag = 0x46504753;

enum class RecordKind : uint32_t {
  kSamples = 1,
  kMaps = 2,
  kCounters = 3,
};

inline constexpr size_t kRecordPrefix = 8;  // tag, kind
inline constexpr size_t kSamplesPrefix = kRecordPrefix + 8;
inline constexpr size_t kMapsPrefix = kRecordPrefix + 8;
inline constexpr size_t kCountersPrefix = kRecordPrefix + 8;

// rbx, rbp, rsp, rip, r12-r15: the bits of sampler::kDwarfRegsMask, in
// ascending perf register number (what from_perf_regs expects).
inline constexpr int kRegsPerSample = 8;
inline constexpr size_t kSampleHeader = 16 + 8 * kRegsPerSample;
namespace sample_offset {
inline constexpr size_t kTime = 0;
inline constexpr size_t kOverruns = 8;
inline constexpr size_t kStackSize = 12;
inline constexpr size_t kRegs = 16;
}  // namespace sample_offset

// Largest stack copy a sample may carry (sampler::SamplerOptions::stack_bytes).
inline constexpr uint32_t kMaxStackBytes = 65528;

// Counter slots of a kCounters record. Numbers are positions: append only.
enum Counter : int {
  kSamplesTaken = 0,       // samples written into a thread's buffer
  kSamplesDropped = 1,     // timer signals that found the thread's buffer busy or gone
  kForeignSignals = 2,     // SIGPROFs not from our timers (passed to the program's handler)
  kThreadsSampled = 3,     // threads that got a timer
  kThreadsUnsampled = 4,   // threads without one (table full, timer_create failed)
  kStackCopyFailures = 5,  // sp outside the known stack and unreadable: regs only
  kFlushFailures = 6,      // buffer flushes the spool refused (write errors)
  kTimerOverruns = 7,      // periods that elapsed without a signal of their own
  kHandlerReplaced = 8,    // 1 when the program installed its own SIGPROF handler over ours
  kNumCounters = 9,
};

// Environment of the target (set by sample_command_in_process).
inline constexpr const char* kEnvDir = "STRATA_SIGPROF_DIR";
inline constexpr const char* kEnvHz = "STRATA_SIGPROF_HZ";
inline constexpr const char* kEnvStackBytes = "STRATA_SIGPROF_STACK";

inline constexpr uint32_t kDefaultHz = 1000;
inline constexpr uint32_t kDefaultStackBytes = 16384;

}  // namespace strata::sampler::sigprof
