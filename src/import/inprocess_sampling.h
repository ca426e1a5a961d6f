// The in-process sampler end to end: run the command with
// libstrata_sigprof.so preloaded (sampler/inprocess/inprocess_sampler.h) and
// import the spools it left (sigprof_spool.h) into the same RawProfile that
// sample_command (perf_event_open) returns, so unwinding, symbolization and
// reports are shared.
//
// Threading: as run_with_sigprof (blocks, forks, owns SIGINT/SIGTERM and the
// child's environment while it runs: one call at a time per process).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "sampler/inprocess/inprocess_sampler.h"
#include "sampler/sampler.h"

namespace strata::import {

// What the run sampled: the profile's mode is always kDwarf (the handler
// copies stacks; it does not walk frame pointers), noted when fp was asked
// for. Errors: those of run_with_sigprof, and kSystem when the target wrote
// no spool at all (statically linked or setuid: LD_PRELOAD ignored).
Result<sampler::RawProfile> sample_command_in_process(const std::vector<std::string>& argv,
                                                      const sampler::SamplerOptions& options,
                                                      const std::string& preload_library_path,
                                                      sampler::SampleErrorKind* kind = nullptr);

}  // namespace strata::import
