// Reading of libstrata_sigprof.so's spools (format/sampler_payloads.h) into
// the sampler's RawProfile, the structure the perf_event_open sampler
// returns, so that unwinding and symbolization downstream are shared. Each
// spool goes through the one chunk loop (chunk_visitor.h).
//
// The payload decoders (format/) are strict: a chunk whose sizes do not add
// up exactly is an error (its CRC held, so the writer wrote it that way), and
// add_sigprof_spool counts it instead of failing the profile. Pure
// functions, thread-safe; they allocate only what they return.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "format/sampler_payloads.h"
#include "format/spool_reader.h"
#include "sampler/sampler.h"

namespace strata::import {

// The executable mappings of /proc/PID/maps text (symbolize::parse_proc_maps)
// as MMAP2-like Mappings of `pid` at `time`, as perf would send them. Lines
// that do not parse are skipped and counted in *bad_lines.
std::vector<sampler::Mapping> executable_mappings(std::string_view text, uint32_t pid,
                                                  uint64_t time, uint64_t* bad_lines);

// What one spool held besides what it added to the profile.
struct SpoolSummary {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  bool has_process_info = false;
  int64_t start_ns = 0;  // the header's CLOCK_MONOTONIC open time
  uint64_t samples = 0;
  uint64_t bad_records = 0;  // CRC-valid chunks whose payload did not decode
  uint64_t bad_map_lines = 0;
  bool have_counters = false;
  format::SamplerCounters counters;  // the latest sampler-counters chunk
  format::SpoolStats stats;          // the reader's damage counts, final
};

// Reads every chunk of `reader` and appends its samples, mappings and thread
// names to *profile (samples unsorted; mappings deduplicated per pid against
// what *profile already holds). profile->regs_per_sample must be
// format::kSamplerRegsPerSample and profile->period_ns set: each sample's period is
// period_ns x (1 + overruns).
SpoolSummary add_sigprof_spool(format::SpoolReader& reader, sampler::RawProfile* profile);

// The spools a run left in `dir` (sigprof-*.bin), merged into one profile:
// images oldest first (after an exec under the same pid the new image's
// mappings win), FORK events for the processes the target forked, samples
// in time order. Damage is counted and noted, never an error. Options used:
// frequency_hz, stack_bytes.
sampler::RawProfile read_sigprof_dir(const std::string& dir,
                                     const sampler::SamplerOptions& options);

}  // namespace strata::import
