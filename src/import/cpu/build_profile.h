// Turns what the sampler captured (registers, stack copies or callchains,
// mappings) into an analysis::Profile: unwinds each sample offline with DWARF
// CFI (or takes the kernel's frame-pointer callchain), symbolizes the frames,
// and names Python functions from CPython's perf maps. The import step of
// the CPU data path: sampler -> import -> store -> analysis.
//
// Threading: single-threaded; it owns a Symbolizer for the call.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/cpu_profile.h"
#include "sampler/sampler.h"

namespace strata::import {

struct CaptureCounters {
  uint64_t unwind_truncated = 0;   // stacks cut by the stack-copy size
  uint64_t unwind_max_frames = 0;  // stacks cut at BuildOptions::max_frames
  uint64_t unwind_incomplete = 0;  // walks that stopped without CFI or with an error
  uint64_t python_maps_read = 0;   // /tmp/perf-PID.map files read (and deleted)
  // Samples whose Python stack read from memory was merged into the native
  // one, and those whose two stacks disagreed (the Python stack moved on
  // between the sample and the read): these keep the native stack only.
  uint64_t python_stacks_merged = 0;
  uint64_t python_stacks_mismatched = 0;
  // Of the stacks cut by the stack copy, those whose Python stack read from
  // memory was merged: their Python frames are whole down to the root (the
  // native frames between them are what is missing), so they count as not
  // cut (analysis::Sample::cut) for what is read from Python frames: the
  // Python view, the import tree.
  uint64_t python_whole_of_truncated = 0;
  // The sampler's reads of those stacks (sampler::SamplerCounters): failed
  // ones, and the ns strata spent reading and waited after each sample.
  uint64_t python_read_failures = 0;
  uint64_t python_read_ns = 0;
  uint64_t python_read_delay_ns = 0;
};

struct BuiltProfile {
  analysis::Profile profile;
  CaptureCounters counters;
};

struct BuildOptions {
  // Which sampler captured the samples (kInProcess: the LD_PRELOAD'ed SIGPROF
  // fallback); the profile and the reports say so.
  analysis::ProfileMode mode = analysis::ProfileMode::kPerfEvent;
  // Deep enough for a Python program's imports (each level is ~6 Python
  // frames and their interpreter frames); the stack copy ends most stacks
  // first.
  size_t max_frames = 1024;
  // Read /tmp/perf-PID.map of every sampled process and delete it afterwards,
  // but only a map the process itself wrote: a regular file owned by the uid
  // it ran as, absent when the run started (perf_map_owner.h says why).
  bool python_perf_maps = true;
  std::string perf_map_dir = "/tmp";
};

BuiltProfile build_profile(const sampler::RawProfile& raw, const BuildOptions& options);

}  // namespace strata::import
