#include "cli/cpu_sampling.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>

#include "common/strings.h"
#include "import/cpu/store_profile.h"
#include "import/inprocess_sampling.h"

namespace strata::cli {

void add_sampling_flags(CLI::App* sub, SamplingFlags& flags) {
  sub->add_option("-F,--frequency", flags.frequency, "Samples per second per busy thread")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_option("--call-graph", flags.call_graph,
                  "dwarf: copy user stacks and unwind with DWARF CFI; fp: frame pointers")
      ->capture_default_str();
  sub->add_option("--stack-size", flags.stack_bytes,
                  "Bytes of user stack copied per sample (dwarf)")
      ->check(CLI::Range(1024, 65528))
      ->capture_default_str();
  sub->add_option("--sampler", flags.sampler,
                  "auto: perf_event_open, in-process where it is refused; perf; in-process "
                  "(LD_PRELOAD'ed SIGPROF sampler)")
      ->check(CLI::IsMember({"auto", "perf", "in-process"}))
      ->capture_default_str();
}

Result<sampler::SamplerOptions> sampler_options(const SamplingFlags& flags) {
  sampler::SamplerOptions so;
  if (flags.call_graph == "dwarf") {
    so.mode = sampler::StackMode::kDwarf;
  } else if (flags.call_graph == "fp") {
    so.mode = sampler::StackMode::kFramePointer;
  } else {
    return make_error("--call-graph '" + printable(flags.call_graph) + "': use dwarf or fp");
  }
  so.frequency_hz = flags.frequency;
  so.stack_bytes = flags.stack_bytes;
  return so;
}

Result<SampledRun> sample_with_fallback(const std::vector<std::string>& command,
                                        const sampler::SamplerOptions& options,
                                        const std::string& choice, sampler::SampleErrorKind* kind) {
  auto in_process_run = [&] {
    return import::sample_command_in_process(command, options, sampler::find_sigprof_library(),
                                              kind);
  };
  SampledRun run;
  run.in_process = choice == "in-process";
  auto raw = run.in_process ? in_process_run() : sampler::sample_command(command, options, kind);
  if (!raw && *kind == sampler::SampleErrorKind::kPerfUnavailable && choice == "auto") {
    // sample_command gave up before the child exec'd: the command runs once.
    std::fprintf(stderr, "strata: %s; sampling in-process (LD_PRELOAD) instead\n",
                 raw.error().message.c_str());
    run.in_process = true;
    raw = in_process_run();
  }
  STRATA_ASSIGN_OR_RETURN(run.raw, std::move(raw));
  return run;
}

void print_sampling_notes(const sampler::RawProfile& raw) {
  for (const auto& note : raw.notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
  if (raw.signal) {
    const char* abbrev = sigabbrev_np(*raw.signal);
    std::fprintf(stderr,
                 "strata: the target was killed by signal %d (SIG%s); its profile is kept\n",
                 *raw.signal, abbrev ? abbrev : "?");
  }
}

BuiltProfile build_sampled_profile(const SampledRun& run, bool python_stacks,
                                   uint32_t stack_bytes) {
  import::BuildOptions build;
  build.python_stacks = python_stacks;
  if (run.in_process) build.mode = analysis::ProfileMode::kInProcess;
  BuiltProfile built = import::build_profile(run.raw, build);
  if (built.counters.unwind_truncated > 0) {
    std::fprintf(stderr,
                 "strata: %llu stacks were deeper than the %u-byte stack copy and are cut short "
                 "(raise --stack-size)\n",
                 static_cast<unsigned long long>(built.counters.unwind_truncated), stack_bytes);
  }
  return built;
}

Status write_sampled_profile(store::TraceWriter& writer, const BuiltProfile& built) {
  return import::store_profile(writer, built);
}

}  // namespace strata::cli
