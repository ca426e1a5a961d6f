// The CLI's half of the in-process sampler (docs/sampler-fallback.md): runs
// a command with libstrata_sigprof.so preloaded, which leaves one spool per
// process image in a private directory. Reading those spools into the
// RawProfile that sample_command (perf_event_open) returns is the import
// layer's (import/sigprof_spool.h; import/inprocess_sampling.h runs and reads
// in one call). For where perf_event_open is refused (sandboxes,
// perf_event_paranoid 3, seccomp).
//
// Threading: like sample_command, run_with_sigprof blocks until the child
// exits, forks (call it from a single-threaded process), owns the process's
// SIGINT and SIGTERM handlers while it runs, and sets LD_PRELOAD and
// STRATA_SIGPROF_* in this process's environment for the child, restoring
// them before it returns: one call at a time per process.
// Ownership: the spool directory belongs to the returned SigprofRun and is
// removed with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/private_dir.h"
#include "common/process.h"
#include "common/result.h"
#include "sampler/sampler.h"

namespace strata::sampler {

struct SigprofRun {
  PrivateDir spools;  // the target's sigprof-*.bin files
  ProcessResult process;
  int child_pid = -1;
  int64_t start_ns = 0;  // CLOCK_MONOTONIC around the command
  int64_t end_ns = 0;
};

// Runs argv with `preload_library_path` (libstrata_sigprof.so) preloaded:
// every thread started through pthread_create and every descendant process
// that loads the library is sampled, each sample with the registers of
// kDwarfRegsMask and up to options.stack_bytes of stack. Options used:
// frequency_hz, stack_bytes, forward_signals, on_child.
// Errors: kCannotStart as sample_command; kSystem when the options are out of
// range, the library is missing or unusable, or the spool directory cannot
// be made.
Result<SigprofRun> run_with_sigprof(const std::vector<std::string>& argv,
                                    const SamplerOptions& options,
                                    const std::string& preload_library_path,
                                    SampleErrorKind* kind = nullptr);

// Where libstrata_sigprof.so is: $STRATA_SIGPROF_LIB when set, else beside
// the running executable (its directory/../lib, so that a moved build or an
// install tree works), else the build tree's path compiled in. The first
// candidate that exists; "" when none does.
std::string find_sigprof_library();

}  // namespace strata::sampler
