#include "import/inprocess_sampling.h"

#include "import/sigprof_spool.h"
#include "import/spool_files.h"

namespace strata::import {

Result<sampler::RawProfile> sample_command_in_process(const std::vector<std::string>& argv,
                                                      const sampler::SamplerOptions& options,
                                                      const std::string& preload_library_path,
                                                      sampler::SampleErrorKind* kind) {
  STRATA_ASSIGN_OR_RETURN(sampler::SigprofRun run,
                          sampler::run_with_sigprof(argv, options, preload_library_path, kind));
  sampler::RawProfile profile = read_sigprof_dir(run.spools.path(), options);
  profile.start_ns = run.start_ns;
  profile.end_ns = run.end_ns;
  if (list_spools(run.spools.path(), kSigprofSpoolPrefix).empty()) {
    if (kind) *kind = sampler::SampleErrorKind::kSystem;
    return make_error("'" + argv[0] +
                      "' was not sampled: the in-process sampler needs a dynamically linked "
                      "program (LD_PRELOAD); statically linked and setuid programs ignore it");
  }
  profile.child_pid = run.child_pid;
  profile.exit_status = run.process.exit_status;
  profile.signal = run.process.signal;
  profile.user_ns = run.process.user_ns;
  profile.sys_ns = run.process.sys_ns;
  profile.minor_faults = run.process.minor_faults;
  if (options.mode == sampler::StackMode::kFramePointer) {
    profile.notes.push_back(
        "the in-process sampler copies stacks for DWARF unwinding; --call-graph fp does not apply");
  }
  return profile;
}

}  // namespace strata::import
