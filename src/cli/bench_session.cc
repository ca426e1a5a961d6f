#include "cli/bench_session.h"

#include <cstdio>
#include <utility>

#include "analysis/bench.h"
#include "cli/new_trace.h"
#include "cli/verbs.h"
#include "common/clock.h"
#include "common/process.h"
#include "common/signal_forwarder.h"
#include "common/strings.h"

namespace strata::cli {

MeasuredRuns measure_runs(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& commands,
    const BenchSessionOptions& opt, SignalForwarder& forwarder, const StopEarly& stop_early) {
  MeasuredRuns measured;
  std::vector<store::BenchRun>& runs = measured.runs;
  bool& any_failed = measured.any_failed;
  bool& started = measured.started;
  auto run_once = [&](const std::string& label, const std::vector<std::string>& argv, int iteration,
                      bool warmup) -> Result<Ok> {
    store::BenchRun run;
    run.label = label;
    run.command = argv;
    run.iteration = iteration;
    run.warmup = warmup;
    ProcessOptions po;
    po.output = opt.quiet ? OutputMode::kDiscard : OutputMode::kInherit;
    if (!opt.metrics.empty()) {
      po.output = OutputMode::kCapture;
      po.echo_captured = !opt.quiet;
      po.discard_stderr = opt.quiet;
      po.on_stdout_line = [&](std::string_view line) {
        for (const auto& key : opt.metrics) {
          if (auto v = analysis::find_metric(line, key)) run.metrics.emplace_back(key, *v);
        }
      };
    }
    po.on_child = [&](int pid) { forwarder.set_child(pid); };
    STRATA_ASSIGN_OR_RETURN(ProcessResult result, run_process(argv, po));
    run.wall_ns = result.wall_ns;
    run.user_ns = result.user_ns;
    run.sys_ns = result.sys_ns;
    run.max_rss_kb = result.max_rss_kb;
    run.minor_faults = result.minor_faults;
    run.major_faults = result.major_faults;
    run.exit_status = result.exit_status;
    run.signal = result.signal;
    if (!result.succeeded()) {
      any_failed = true;
      std::fprintf(stderr, "strata: %s %s %d %s\n", label.c_str(), warmup ? "warm-up" : "run",
                   iteration + 1, describe_termination(result).c_str());
    }
    runs.push_back(std::move(run));
    return Ok{};
  };

  for (int phase = 0; phase < 2 && started && !forwarder.received(); ++phase) {
    bool warmup = phase == 0;
    int count = warmup ? opt.warmups : opt.runs;
    for (int i = 0; i < count && !forwarder.received() && !(stop_early && stop_early(runs)); ++i) {
      for (const auto& [label, argv] : commands) {
        auto ok = run_once(label, argv, i, warmup);
        if (!ok) {
          std::fprintf(stderr, "strata: %s\n", ok.error().message.c_str());
          started = false;
          break;
        }
        if (forwarder.received()) break;
      }
      if (!started) break;
    }
  }
  return measured;
}

int run_bench_session(const BenchSessionOptions& opt, const BenchReporter& report) {
  if (opt.command.empty()) {
    std::fprintf(stderr, "strata: %s needs a command: strata %s [options] -- CMD [ARGS...]\n",
                 opt.verb.c_str(), opt.verb.c_str());
    return kExitUsage;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> commands = {{"A", opt.command}};
  if (opt.vs) {
    auto b = split_command_line(*opt.vs);
    if (!b) {
      std::fprintf(stderr, "strata: --vs: %s\n", b.error().message.c_str());
      return kExitUsage;
    }
    if (b->empty() || b->front().empty()) {
      std::fprintf(stderr, "strata: --vs '%s': names no command (--vs 'CMD2 ARGS')\n",
                   printable(*opt.vs).c_str());
      return kExitUsage;
    }
    commands.push_back({"B", std::move(b).value()});
  }
  for (const auto& key : opt.metrics) {
    if (key.empty() || key.find_first_of("= \t") != std::string::npos) {
      std::fprintf(stderr, "strata: --metric '%s': a key is a word without '=' or spaces\n",
                   printable(key).c_str());
      return kExitUsage;
    }
  }

  // Both commands are checked before either runs: a B that cannot start
  // would otherwise stop the loop after A's first run. Same line and status
  // as a command that fails to start (run_process).
  for (const auto& [label, argv] : commands) {
    if (auto problem = command_start_problem(argv)) {
      std::fprintf(stderr, "strata: %s\n", problem->c_str());
      return kExitCannotStart;
    }
  }

  // A signal to strata goes on to the running child, and the loop stops
  // after it, so the runs already measured are still reported and written.
  // Made before the trace's temporary file exists, so that no signal can
  // leave that file behind (docs/cli.md, Signals).
  SignalForwarder forwarder;
  auto new_trace = start_trace(opt.output, opt.force, "strata-" + opt.verb, opt.verb, opt.command);
  NewTrace* trace = std::get_if<NewTrace>(&new_trace);
  if (trace == nullptr) return std::get<int>(new_trace);
  store::TraceWriter& writer = trace->writer;
  store::RunInfo& info = trace->info;

  MeasuredRuns measured = measure_runs(commands, opt, forwarder);
  std::vector<store::BenchRun>& runs = measured.runs;
  const bool started = measured.started;
  const bool any_failed = measured.any_failed;
  if (!started && runs.empty()) return kExitCannotStart;

  info.end_ns = realtime_ns();
  info.exit_status = any_failed ? kExitFailed : kExitOk;
  const int report_status = report(runs);
  std::fflush(stdout);

  Status written = write_run_and_commit(*trace, [&] { return writer.write_bench_runs(runs); });
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", printable(written.error().message).c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "strata: results written to %s\n", trace->path().c_str());

  if (!started) return kExitCannotStart;
  if (forwarder.received()) return 128 + forwarder.received();
  return any_failed ? kExitFailed : report_status;
}

}  // namespace strata::cli
