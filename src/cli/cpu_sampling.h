// Running a command under the CPU sampler, shared by `strata cpu` and
// `strata trace --trace ...,cpu`: perf_event_open from outside, or the
// LD_PRELOAD'ed in-process sampler where perf events are refused (and the
// user left --sampler at auto), then the offline unwind and symbolization
// and the rows the trace stores.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "import/cpu/build_profile.h"
#include "sampler/sampler.h"
#include "store/trace_db.h"

namespace CLI {
class App;
}

namespace strata::cli {

using import::BuiltProfile;

// The sampling flags `strata cpu` and `strata trace` share.
// The most user stack a perf_event sample can carry (its size is a u16,
// rounded down to 8 bytes): --stack-size's upper bound.
constexpr uint32_t kLargestStackCopy = 65528;
// strata cpu's default copy: 16 KiB covers ~100 typical C++ frames.
constexpr uint32_t kDefaultStackCopy = 16384;

struct SamplingFlags {
  // perf record's default rate: ≥ 300 samples on the tutorial's 80 ms run,
  // where 1 kHz gave 85 (docs/PERFORMANCE.md has its overhead, +2.1 % on the H200).
  uint32_t frequency = 4000;
  std::string call_graph = "dwarf";
  uint32_t stack_bytes = kDefaultStackCopy;
  std::string sampler = "auto";
  std::string
      mmap_pages;  // perf's -m: data pages per CPU ring, or a size (512K, 2M); empty: default
};

// perf's -m value: a page count that is a power of two, or a size with a
// K, M or G suffix that is a whole power-of-two number of pages; at least
// sampler::kMinRingPages pages and at most 1 GiB. An error names the value.
Result<uint32_t> parse_mmap_pages(std::string_view text, uint32_t page_size);

void add_sampling_flags(CLI::App* sub, SamplingFlags& flags);

// The sampler's options from the flags; a bad --call-graph is an error
// naming it.
Result<sampler::SamplerOptions> sampler_options(const SamplingFlags& flags);

struct SampledRun {
  sampler::RawProfile raw;
  bool in_process = false;  // which sampler ran (the report header says so)
};

// Whether a command runs a Python interpreter (python*, found as execvp
// would, through `env`, or a script whose #! line names python): the
// sampler then wakes at every sample to read Python stacks promptly.
bool command_runs_python(const std::vector<std::string>& command);

// `choice` is auto, perf or in-process (SamplingFlags::sampler). On failure *kind says why
// (kCannotStart: the command did not start).
Result<SampledRun> sample_with_fallback(const std::vector<std::string>& command,
                                        const sampler::SamplerOptions& options,
                                        const std::string& choice, sampler::SampleErrorKind* kind);

// Prints what the sampler noted, where the samples asked for went when a
// tenth or more is missing (sampler::account_samples), a warning when
// sampling slowed the target by more than 10 %, the processes too short to
// sample, and how the target ended ("killed by signal 11 (SIGSEGV); its
// profile is kept"), on stderr.
void print_sampling_notes(const sampler::RawProfile& raw);

// Unwinds and symbolizes; warns when stacks were cut by the copy size.
BuiltProfile build_sampled_profile(const SampledRun& run, uint32_t stack_bytes);

// The profile's rows and its unwind counters into the (uncommitted) trace.
Status write_sampled_profile(store::TraceWriter& writer, const BuiltProfile& built);

// Where the samples asked for went, and the processes too short to sample,
// as strata_counters rows (cpu.periods_asked, cpu.periods_throttled,
// cpu.periods_skipped, cpu.processes, cpu.processes_unsampled); perf
// sampling only (the in-process sampler has no cpu-clock count).
Status write_sample_account(store::TraceWriter& writer, const sampler::RawProfile& raw);

}  // namespace strata::cli
