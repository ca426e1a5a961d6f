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

#include "cli/cpu_capture.h"
#include "cli/cpu_flags.h"
#include "cli/cpu_instrument.h"
#include "cli/cpu_profile_rows_convert.h"
#include "cli/new_trace.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "common/clock.h"
#include "common/process.h"
#include "common/strings.h"
#include "sampler/inprocess/inprocess_sampler.h"
#include "sampler/sampler.h"
#include "store/cpu_profile_rows.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct CpuOptions {
  uint32_t frequency = 1000;
  std::string call_graph = "dwarf";
  uint32_t stack_bytes = 16384;
  std::optional<std::string> output;
  bool force = false;
  bool native = false;
  bool instrument = false;
  std::string sampler = "auto";
  CpuReportFlags report;
  std::vector<std::string> command;
};

// --instrument: exact calls from a program built with -finstrument-functions.
int run_instrumented_cpu(const CpuOptions& opt, store::TraceWriter& writer, store::RunInfo& info,
                         const std::string& path) {
  auto run = run_instrumented(opt.command);
  if (!run) {
    std::fprintf(stderr, "strata: %s\n", run.error().message.c_str());
    return run.error().message.rfind("cannot start", 0) == 0 ? kExitCannotStart : kExitFailed;
  }
  info.end_ns = realtime_ns();
  info.exit_status = run->process.exit_status;
  info.signal = run->process.signal;
  for (const auto& note : run->data.notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
  Status written = writer.write_run(info);
  if (written) written = store::write_cpu_profile(writer, to_rows(run->data.profile));
  if (written) {
    written = writer.add_counter("instrument.dropped_events",
                                 static_cast<int64_t>(run->data.counters.dropped_events));
  }
  if (written) {
    written = writer.add_counter("instrument.damaged_chunks",
                                 static_cast<int64_t>(run->data.counters.damaged_chunks));
  }
  if (written) written = writer.commit();
  int report_status = print_cpu_profile(run->data.profile, opt.report);
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", written.error().message.c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "strata: profile written to %s\n", path.c_str());
  if (report_status != kExitOk) return report_status;
  return run->process.shell_status();
}

int run_cpu(const CpuOptions& opt) {
  sampler::SamplerOptions so;
  if (opt.call_graph == "dwarf") {
    so.mode = sampler::StackMode::kDwarf;
  } else if (opt.call_graph == "fp") {
    so.mode = sampler::StackMode::kFramePointer;
  } else {
    std::fprintf(stderr, "strata: --call-graph '%s': use dwarf or fp\n",
                 printable(opt.call_graph).c_str());
    return kExitUsage;
  }
  so.frequency_hz = opt.frequency;
  so.stack_bytes = opt.stack_bytes;

  auto trace = start_trace(opt.output, opt.force, "strata-cpu", "cpu", opt.command);
  if (!trace) return kExitUsage;
  std::string& path = trace->path;
  store::TraceWriter& writer = trace->writer;
  store::RunInfo& info = trace->info;

  // CPython >= 3.12 writes /tmp/perf-PID.map with its trampolines on; older
  // interpreters and other programs ignore the variable.
  if (!std::getenv("PYTHONPERFSUPPORT")) setenv("PYTHONPERFSUPPORT", "1", 1);

  if (opt.instrument) return run_instrumented_cpu(opt, writer, info, path);

  sampler::SampleErrorKind kind = sampler::SampleErrorKind::kNone;
  auto sample_in_process = [&] {
    return sampler::sample_command_in_process(opt.command, so, sampler::find_sigprof_library(),
                                              &kind);
  };
  bool in_process = opt.sampler == "in-process";
  auto raw = in_process ? sample_in_process() : sampler::sample_command(opt.command, so, &kind);
  if (!raw && kind == sampler::SampleErrorKind::kPerfUnavailable && opt.sampler == "auto") {
    // sample_command gave up before the child exec'd: the command runs once.
    std::fprintf(stderr, "strata: %s; sampling in-process (LD_PRELOAD) instead\n",
                 raw.error().message.c_str());
    in_process = true;
    raw = sample_in_process();
  }
  if (!raw) {
    std::fprintf(stderr, "strata: %s\n", raw.error().message.c_str());
    return kind == sampler::SampleErrorKind::kCannotStart ? kExitCannotStart : kExitFailed;
  }
  info.end_ns = realtime_ns();
  info.exit_status = raw->exit_status;
  info.signal = raw->signal;
  for (const auto& note : raw->notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
  if (raw->signal) {
    std::fprintf(stderr,
                 "strata: the target was killed by signal %d (SIG%s); its profile is kept\n",
                 *raw->signal, sigabbrev_np(*raw->signal) ? sigabbrev_np(*raw->signal) : "?");
  }

  BuildOptions build;
  build.python_stacks = !opt.native;
  BuiltProfile built = build_profile(*raw, build);
  if (in_process) built.profile.mode = analysis::ProfileMode::kInProcess;
  if (built.counters.unwind_truncated > 0) {
    std::fprintf(stderr,
                 "strata: %llu stacks were deeper than the %u-byte stack copy and are cut short "
                 "(raise --stack-size)\n",
                 static_cast<unsigned long long>(built.counters.unwind_truncated), opt.stack_bytes);
  }

  Status written = writer.write_run(info);
  if (written) written = store::write_cpu_profile(writer, to_rows(built.profile));
  if (written) {
    written = writer.add_counter("cpu.unwind_truncated",
                                 static_cast<int64_t>(built.counters.unwind_truncated));
  }
  if (written) {
    written = writer.add_counter("cpu.unwind_incomplete",
                                 static_cast<int64_t>(built.counters.unwind_incomplete));
  }
  if (written) written = writer.commit();

  int report_status = print_cpu_profile(built.profile, opt.report);
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", written.error().message.c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "strata: profile written to %s\n", path.c_str());
  if (report_status != kExitOk) return report_status;
  return raw->shell_status();
}

}  // namespace

VerbRunner add_cpu(CLI::App& app) {
  auto opt = std::make_shared<CpuOptions>();
  auto* sub = app.add_subcommand("cpu", "CPU profile (cProfile/pstats, perf): sample a command");
  sub->add_option("-F,--frequency", opt->frequency, "Samples per second per busy thread")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_option("--call-graph", opt->call_graph,
                  "dwarf: copy user stacks and unwind with DWARF CFI; fp: frame pointers")
      ->capture_default_str();
  sub->add_option("--stack-size", opt->stack_bytes, "Bytes of user stack copied per sample (dwarf)")
      ->check(CLI::Range(1024, 65528))
      ->capture_default_str();
  sub->add_option("-o,--output", opt->output, "Trace file (default: strata-cpuN.sqlite)");
  sub->add_flag("--force", opt->force, "Overwrite the trace file if it exists");
  sub->add_flag("--native", opt->native,
                "Python targets: keep the interpreter's frames (default: Python functions "
                "get the interpreter time spent on them, as in cProfile)");
  sub->add_flag("--instrument", opt->instrument,
                "Exact call counts (ncalls 3/1) from a program built with -finstrument-functions "
                "and linked with strata::instrument");
  sub->add_option("--sampler", opt->sampler,
                  "auto: perf_event_open, in-process where it is refused; perf; in-process "
                  "(LD_PRELOAD'ed SIGPROF sampler)")
      ->check(CLI::IsMember({"auto", "perf", "in-process"}))
      ->capture_default_str();
  add_cpu_report_flags(sub, opt->report);
  sub->add_option("command", opt->command, "-- CMD [ARGS...]")->required();
  sub->positionals_at_end(true);
  return [opt] { return run_cpu(*opt); };
}

}  // namespace strata::cli
