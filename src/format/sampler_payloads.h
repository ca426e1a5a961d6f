// The in-process sampler's chunks (since 1.2), written by libstrata_sigprof.so
// (src/sampler/inprocess/sigprof_preload.cc) and read by src/import
// (docs/sampler-fallback.md has the prose). Thread names, the process's
// pid/ppid/exe/argv and /proc/self/maps snapshots use the spool's shared
// thread-name, process-info and memory-map chunks.
//
// sampler-samples (11): u32 tid, u32 count, then count samples, each
//   u64 time (CLOCK_MONOTONIC ns), u32 overruns (timer periods that elapsed
//   beyond the one this sample stands for), u32 stack_size,
//   u64 regs[kSamplerRegsPerSample] (perf register order,
//   sampler::kDwarfRegsMask), stack_size bytes from sp upwards, zero padding
//   to a multiple of 8.
// sampler-counters (12): u32 hz, u32 stack_bytes, then one u64 total per
//   SamplerCounter slot (cumulative for the process image: a later chunk
//   supersedes). A reader takes the slots it knows; a newer writer may add.
//
// Decoders are strict, like payloads.h: sizes that do not add up exactly are
// an error. Views point into the payload. Pure functions, thread-safe; they
// allocate only what they return.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "format/spool_format.h"
#include "format/wire_names.h"

namespace strata::format {

inline constexpr size_t kSamplerSamplesPrefix = 8;   // tid, count
inline constexpr size_t kSamplerCountersPrefix = 8;  // hz, stack_bytes

// rbx, rbp, rsp, rip, r12-r15: the bits of sampler::kDwarfRegsMask, in
// ascending perf register number (what from_perf_regs expects).
inline constexpr int kSamplerRegsPerSample = 8;
inline constexpr int kSamplerIpRegister = 3;  // rip's index in regs
inline constexpr int kSamplerSpRegister = 2;  // rsp's index in regs
inline constexpr size_t kSamplerSampleHeader = 16 + 8 * kSamplerRegsPerSample;
namespace sampler_sample_offset {
inline constexpr size_t kTime = 0;
inline constexpr size_t kOverruns = 8;
inline constexpr size_t kStackSize = 12;
inline constexpr size_t kRegs = 16;
}  // namespace sampler_sample_offset

// Largest stack copy a sample may carry (sampler::SamplerOptions::stack_bytes).
inline constexpr uint32_t kSamplerMaxStackBytes = 65528;

// Slots of a sampler-counters chunk. Numbers are positions: append only.
enum SamplerCounter : int {
  kSamplesTaken = 0,       // samples written into a thread's buffer
  kSamplesDropped = 1,     // timer signals that found the thread's buffer busy or gone
  kForeignSignals = 2,     // SIGPROFs not from our timers (passed to the program's handler)
  kThreadsSampled = 3,     // threads that got a timer
  kThreadsUnsampled = 4,   // threads without one (table full, timer_create failed)
  kStackCopyFailures = 5,  // sp outside the known stack and unreadable: regs only
  kFlushFailures = 6,      // buffer flushes the spool refused (write errors)
  kTimerOverruns = 7,      // periods that elapsed without a signal of their own
  kHandlerReplaced = 8,    // 1 when the program installed its own SIGPROF handler over ours
  kNumSamplerCounters = 9,
};
inline constexpr WireName kSamplerCounterNames[] = {
    {kSamplesTaken, "samples-taken"},         {kSamplesDropped, "samples-dropped"},
    {kForeignSignals, "foreign-signals"},     {kThreadsSampled, "threads-sampled"},
    {kThreadsUnsampled, "threads-unsampled"}, {kStackCopyFailures, "stack-copy-failures"},
    {kFlushFailures, "flush-failures"},       {kTimerOverruns, "timer-overruns"},
    {kHandlerReplaced, "handler-replaced"},
};
static_assert(wire_names_unique(kSamplerCounterNames), "two sampler counters share a slot");
static_assert(std::size(kSamplerCounterNames) == kNumSamplerCounters);

struct SampleView {
  uint64_t time = 0;
  uint32_t overruns = 0;
  std::array<uint64_t, kSamplerRegsPerSample> regs{};  // perf order (kDwarfRegsMask)
  std::span<const std::byte> stack;
};

struct SamplerSamples {
  uint32_t tid = 0;
  std::vector<SampleView> samples;
};

struct SamplerCounters {
  uint32_t hz = 0;
  uint32_t stack_bytes = 0;
  // Slots this build knows; a newer writer's extra slots are ignored, an
  // older writer's missing ones read 0.
  std::array<uint64_t, kNumSamplerCounters> totals{};
};

Result<SamplerSamples> decode_sampler_samples(std::span<const std::byte> payload);
Result<SamplerCounters> decode_sampler_counters(std::span<const std::byte> payload);

}  // namespace strata::format
