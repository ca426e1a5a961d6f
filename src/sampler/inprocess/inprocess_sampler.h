// The CLI's half of the in-process sampler (docs/sampler-fallback.md): runs
// a command with libstrata_sigprof.so preloaded and turns the spools it
// writes into the same RawProfile that sample_command (perf_event_open)
// returns, so unwinding, symbolization and reports are shared. For where
// perf_event_open is refused (sandboxes, perf_event_paranoid 3, seccomp).
//
// Threading: like sample_command, sample_command_in_process blocks until the
// child exits, forks (call it from a single-threaded process), owns the
// process's SIGINT and SIGTERM handlers while it runs, and sets LD_PRELOAD
// and STRATA_SIGPROF_* in this process's environment for the child,
// restoring them before it returns: one call at a time per process.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "sampler/sampler.h"

namespace strata::sampler {

// Runs argv with `preload_library_path` (libstrata_sigprof.so) preloaded
// and returns what it sampled: every thread started through pthread_create
// and every descendant process that loads the library, each sample with the
// registers of kDwarfRegsMask and up to options.stack_bytes of stack. The
// profile's mode is always kDwarf (the handler copies stacks; it does not
// walk frame pointers), noted when fp was asked for. Options used:
// frequency_hz, stack_bytes, forward_signals, on_child.
// Errors: kCannotStart as sample_command; kSystem when the library is
// missing or unusable, the spool directory cannot be made, or the target
// wrote no spool at all (statically linked or setuid: LD_PRELOAD ignored).
Result<RawProfile> sample_command_in_process(const std::vector<std::string>& argv,
                                             const SamplerOptions& options,
                                             const std::string& preload_library_path,
                                             SampleErrorKind* kind = nullptr);

// Where libstrata_sigprof.so is: $STRATA_SIGPROF_LIB when set, else beside
// the running executable (its directory/../lib, so that a moved build or an
// install tree works), else the build tree's path compiled in. The first
// candidate that exists; "" when none does.
std::string find_sigprof_library();

// The spools a run left in `dir` (sigprof-*.bin), merged into one profile
// the way sample_command_in_process does; exposed for tests and for
// re-reading a kept directory. Damage is counted and noted, never an error.
RawProfile read_sigprof_dir(const std::string& dir, const SamplerOptions& options);

}  // namespace strata::sampler
