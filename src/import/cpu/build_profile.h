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
