// `strata cpu`: the cProfile + pstats step for any program. Samples the
// command with perf_event_open (user stacks copied, unwound offline with
// DWARF CFI, or frame-pointer callchains), symbolizes, stores the profile in
// the trace and prints pstats-style tables. Python >= 3.12 targets get their
// perf trampoline switched on so Python functions appear by name.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "analysis/cpu_profile_rows_convert.h"
#include "cli/agent_run.h"
#include "cli/cpu_flags.h"
#include "cli/cpu_instrument.h"
#include "cli/cpu_sampling.h"
#include "cli/new_trace.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "common/clock.h"
#include "common/process.h"
#include "common/signal_forwarder.h"
#include "common/strings.h"
#include "sampler/sampler.h"
#include "store/cpu_profile_rows.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct CpuOptions {
  SamplingFlags sampling;
  std::optional<std::string> output;
  bool force = false;
  bool instrument = false;
  CpuReportFlags report;
  std::vector<std::string> command;
};

// --instrument: exact calls from a program built with -finstrument-functions.
int run_instrumented_cpu(const CpuOptions& opt, NewTrace& trace,
                         const SignalForwarder& interrupts) {
  auto run = run_instrumented(opt.command);
  if (!run) {
    const std::string& message = run.error().message;
    std::fprintf(stderr, "strata: %s\n", printable(message).c_str());
    if (message.rfind("cannot start", 0) == 0) return kExitCannotStart;
    // A program not built for --instrument is the user's to fix, like a bad flag.
    if (message.find(kNoInstrumentationEvents) != std::string::npos) return kExitUsage;
    return kExitFailed;
  }
  trace.info.end_ns = realtime_ns();
  trace.info.exit_status = run->process.exit_status;
  trace.info.signal = run->process.signal;
  for (const auto& note : run->data.notes)
    std::fprintf(stderr, "strata: %s\n", printable(note).c_str());
  Status written = write_run_and_commit(trace, [&]() -> Status {
    store::TraceWriter& writer = trace.writer;
    STRATA_TRY(store::write_cpu_profile(writer, analysis::to_rows(run->data.profile)));
    STRATA_TRY(writer.add_counter("instrument.dropped_events",
                                  static_cast<int64_t>(run->data.counters.dropped_events)));
    return writer.add_counter("instrument.damaged_chunks",
                              static_cast<int64_t>(run->data.counters.damaged_chunks));
  });
  int report_status = print_cpu_profile(run->data.profile, opt.report);
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", printable(written.error().message).c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "strata: profile written to %s\n", printable(trace.path()).c_str());
  if (report_status != kExitOk) return report_status;
  return status_unless_interrupted(interrupts, run->process.shell_status());
}

int run_cpu(const CpuOptions& opt) {
  auto so = sampler_options(opt.sampling);
  if (!so) {
    std::fprintf(stderr, "strata: %s\n", printable(so.error().message).c_str());
    return kExitUsage;
  }

  // From before the trace's temporary file exists until it is committed, a
  // signal that would kill strata goes to the target instead, and the
  // profile of what ran is written (docs/cli.md, Signals).
  SignalForwarder interrupts;
  auto new_trace = start_trace(opt.output, opt.force, "strata-cpu", "cpu", opt.command);
  NewTrace* trace = std::get_if<NewTrace>(&new_trace);
  if (trace == nullptr) return std::get<int>(new_trace);

  if (opt.instrument) return run_instrumented_cpu(opt, *trace, interrupts);

  sampler::SampleErrorKind kind = sampler::SampleErrorKind::kNone;
  auto run = sample_with_fallback(opt.command, *so, opt.sampling.sampler, &kind);
  if (!run) {
    std::fprintf(stderr, "strata: %s\n", printable(run.error().message).c_str());
    return kind == sampler::SampleErrorKind::kCannotStart ? kExitCannotStart : kExitFailed;
  }
  const sampler::RawProfile& raw = run->raw;
  trace->info.end_ns = realtime_ns();
  trace->info.exit_status = raw.exit_status;
  trace->info.signal = raw.signal;
  print_sampling_notes(raw);
  BuiltProfile built = build_sampled_profile(*run, opt.sampling.stack_bytes);

  Status written = write_run_and_commit(*trace, [&]() -> Status {
    STRATA_TRY(write_sample_account(trace->writer, raw));
    return write_sampled_profile(trace->writer, built);
  });

  int report_status = print_cpu_profile(built.profile, opt.report);
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", printable(written.error().message).c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "strata: profile written to %s\n", printable(trace->path()).c_str());
  if (report_status != kExitOk) return report_status;
  return status_unless_interrupted(interrupts, raw.shell_status());
}

}  // namespace

VerbRunner add_cpu(CLI::App& app) {
  auto opt = std::make_shared<CpuOptions>();
  auto* sub = app.add_subcommand("cpu", "CPU profile (cProfile/pstats, perf): sample a command");
  add_sampling_flags(sub, opt->sampling);
  sub->add_option("-o,--output", opt->output, "Trace file (default: strata-cpuN.sqlite)");
  sub->add_flag("--force", opt->force, "Overwrite the trace file if it exists");
  sub->add_flag("--instrument", opt->instrument,
                "Exact call counts (ncalls 3/1) from a program built with -finstrument-functions "
                "and linked with strata::instrument");
  add_cpu_report_flags(sub, opt->report);
  sub->add_option("command", opt->command, "-- CMD [ARGS...]")->required();
  sub->positionals_at_end(true);
  return [opt] { return run_cpu(*opt); };
}

}  // namespace strata::cli
