// `strata diagnose`: the tutorial's walk, done by the tool. Runs the
// command cheapest layer first, reusing the other verbs' machinery: the
// baseline (`strata bench`'s runs: wall, CPU time, their spread), then one
// recorded run with the CPU sampler and, in CUDA builds, the CUDA/NVTX agent
// and the PyTorch op recorder (`strata trace --trace cuda,nvtx,torch,cpu`),
// then kernel metrics on the top kernels only when the timeline does not
// already explain the time (diagnose_record.h). --budget skips the layers
// whose estimated cost no longer fits. Everything goes into one trace, with
// the layer log and the settings, and the verdict is printed from that
// trace (diagnose_print.h), as `strata report FILE --report diagnosis`
// prints it again later.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnose_thresholds.h"
#include "analysis/diagnose_verdict.h"
#include "cli/bench_session.h"
#include "cli/diagnose_print.h"
#include "cli/diagnose_record.h"
#include "cli/new_trace.h"
#include "cli/report_html.h"
#include "cli/verbs.h"
#include "common/clock.h"
#include "common/signal_forwarder.h"
#include "common/strings.h"
#include "store/diagnose_rows.h"

namespace strata::cli {
namespace {

struct DiagnoseOptions {
  std::optional<std::string> output;
  bool force = false;
  std::optional<double> budget_s;
  std::string format = "table";
  std::optional<std::string> range;
  std::vector<std::string> thresholds;
  std::optional<int> runs;  // unset: two runs, a third when they disagree
  bool quiet = false;
  bool no_html = false;
  std::vector<std::string> command;
};

// What the recorded run is expected to cost against the baseline's slowest
// run: sampling, CUPTI and the op recorder, then unwinding and ingest
// (docs/diagnose.md, Budget). A kernel-metrics run replays its kernel once
// per pass and loads CUPTI's profiler: more.
constexpr double kRecordedRunCost = 2.0;
constexpr double kKernelRunCost = 3.0;

// The default baseline: two runs, and a third only when those two differ by
// more than kSettledSpread of the faster one (a cold first run, a noisy
// program). Two runs that agree already give the wall time and show its
// spread; a third run of a PyTorch program is 4-5 s of the user's wait on
// the H200 (docs/diagnose.md, Baseline). -n N runs exactly N.
constexpr int kDefaultRuns = 2;
constexpr int kMostDefaultRuns = 3;
constexpr double kSettledSpread = 0.05;

bool baseline_settled(const std::vector<store::BenchRun>& runs) {
  if (runs.size() < static_cast<size_t>(kDefaultRuns)) return false;
  int64_t fastest = INT64_MAX, slowest = 0;
  for (const auto& r : runs) {
    if (r.exit_status.value_or(1) != 0 || r.signal) return false;  // a failure: keep measuring
    fastest = std::min(fastest, r.wall_ns);
    slowest = std::max(slowest, r.wall_ns);
  }
  return static_cast<double>(slowest - fastest) <= kSettledSpread * static_cast<double>(fastest);
}

double seconds(int64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

std::string fmt_seconds(double s) {
  return analysis::short_duration(static_cast<int64_t>(std::max(0.0, s) * 1e9));
}

// "%.17g": stored, read back exactly.
std::string fmt_number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// The offline HTML page of the trace (issue 22), as `strata report TRACE
// --format html -o PAGE` writes it: findings first, then the tables, the
// timeline and the flame graph.
int write_page_beside(const std::string& trace, Existing existing) {
  auto reader = store::TraceReader::open(trace);
  if (!reader) return print_usage_error(printable(reader.error().message));
  return write_html_report(*reader, trace, page_beside(trace), CpuReportFlags{}, existing);
}

int run_diagnose(const DiagnoseOptions& opt) {
  if (opt.command.empty()) {
    return print_usage_error(
        "diagnose needs a command: strata diagnose [options] -- CMD [ARGS...]");
  }
  if (opt.format != "table" && opt.format != "json") {
    return print_usage_error("--format '" + printable(opt.format) + "': use table or json");
  }
  if (opt.budget_s && !(std::isfinite(*opt.budget_s) && *opt.budget_s > 0)) {
    return print_usage_error("--budget must be a positive number of seconds");
  }
  if (opt.range && opt.range->empty()) return print_usage_error("--range: empty name");
  analysis::DiagnosisThresholds thresholds;
  for (const auto& assignment : opt.thresholds) {
    if (auto set = analysis::set_threshold(thresholds, assignment); !set) {
      return print_usage_error("--threshold " + set.error().message);
    }
  }
  if (auto problem = command_start_problem(opt.command)) {
    std::fprintf(stderr, "strata: %s\n", problem->c_str());
    return kExitCannotStart;
  }
  const report::Format format =
      opt.format == "json" ? report::Format::kJson : report::Format::kTable;
  // The page beside a named trace is refused before anything runs, as the
  // trace itself is: an existing file is kept unless --force. (A default
  // name's number is the trace's, so its page is the trace's too.)
  if (opt.output && !opt.no_html && !opt.force) {
    const std::string page = page_beside(*opt.output);
    struct stat st;
    if (::lstat(page.c_str(), &st) == 0) {
      return print_usage_error(printable(page) +
                               " exists (the page beside the trace); use --force to overwrite, "
                               "or --no-html");
    }
  }

  // A signal to strata goes on to the running child and stops the walk; what
  // ran is written (docs/cli.md, Signals). Made before the trace's temporary.
  SignalForwarder forwarder;
  auto new_trace = start_trace(opt.output, opt.force, "strata-diagnose", "diagnose", opt.command);
  NewTrace* trace = std::get_if<NewTrace>(&new_trace);
  if (trace == nullptr) return std::get<int>(new_trace);

  const int64_t start = monotonic_ns();
  auto spent = [&] { return seconds(monotonic_ns() - start); };
  const double budget = opt.budget_s.value_or(INFINITY);
  std::vector<store::DiagnoseLayerRow> layers;

  // Baseline: the command as it is, no warm-up (the runs' spread shows one).
  BenchSessionOptions bench;
  bench.runs = opt.runs.value_or(kMostDefaultRuns);
  bench.warmups = 0;
  bench.quiet = opt.quiet;
  bench.command = opt.command;
  bench.verb = "diagnose";
  MeasuredRuns baseline = measure_runs(
      {{"A", opt.command}}, bench, forwarder, [&](const std::vector<store::BenchRun>& runs) {
        return spent() >= budget || (!opt.runs && baseline_settled(runs));
      });
  if (!baseline.started) return kExitCannotStart;  // nothing ran: no trace is left
  int64_t slowest = 0;
  for (const auto& r : baseline.runs) slowest = std::max(slowest, r.wall_ns);
  {
    const size_t done = baseline.runs.size();
    std::string reason =
        std::to_string(done) + " run" + (done == 1 ? "" : "s") + ": wall, CPU time, spread";
    if (!opt.runs && done == static_cast<size_t>(kDefaultRuns) && baseline_settled(baseline.runs)) {
      reason += " (they agree within " + std::to_string(static_cast<int>(kSettledSpread * 100)) +
                " %: no third)";
    } else if (done < static_cast<size_t>(bench.runs) && !forwarder.received()) {
      reason += "; --budget stopped it after " + std::to_string(done) + " of " +
                std::to_string(bench.runs);
    }
    layers.push_back({"baseline", true, reason, monotonic_ns() - start});
  }

  // The recorded layers, when their estimated cost fits what is left.
  std::optional<Recording> recording;
  const double record_cost = kRecordedRunCost * seconds(slowest);
  int error_status = kExitFailed;
  bool record_failed = false;  // the recorded run could not run (the baseline is still written)
  if (forwarder.received()) {
    for (const char* name : {"cpu", "timeline", "ops", "kernels"}) {
      layers.push_back({name, false, "strata was interrupted", 0});
    }
  } else if (spent() + record_cost > budget) {
    const std::string why = "--budget: " + fmt_seconds(budget - spent()) +
                            " left, the recorded run would take about " + fmt_seconds(record_cost);
    for (const char* name : {"cpu", "timeline", "ops", "kernels"}) {
      layers.push_back({name, false, why, 0});
    }
  } else {
    RecordRequest request;
    request.command = opt.command;
    request.thresholds = thresholds;
    request.seconds_per_kernel_run = kKernelRunCost * seconds(slowest);
    // The kernel runs come after the recorded run: what it leaves.
    request.seconds_left = budget - spent() - record_cost;
    auto recorded = record_layers(request, &error_status);
    if (!recorded) {
      std::fprintf(stderr, "strata: %s\n", printable(recorded.error().message).c_str());
      if (error_status == kExitCannotStart) return kExitCannotStart;
      record_failed = true;
      for (const char* name : {"cpu", "timeline", "ops", "kernels"}) {
        layers.push_back({name, false, "the recorded run failed: " + recorded.error().message, 0});
      }
    } else {
      recording = std::move(recorded).value();
      for (auto& l : recording->layers) layers.push_back(std::move(l));
    }
  }

  store::DiagnoseRecord record;
  record.layers = layers;
  if (opt.budget_s) record.settings.emplace_back("budget_s", fmt_number(*opt.budget_s));
  if (opt.range) record.settings.emplace_back("range", *opt.range);
  for (const auto& n : analysis::threshold_names()) {
    record.settings.emplace_back(n.name, analysis::threshold_text(thresholds, n));
  }
  auto write_rest = [&]() -> Status {
    STRATA_TRY(trace->writer.write_bench_runs(baseline.runs));
    return store::write_diagnose_record(trace->writer, record);
  };
  bool written;
  if (recording) {
    written = commit_recording(*recording, *trace, write_rest);
  } else {
    trace->info.end_ns = realtime_ns();
    trace->info.exit_status = baseline.any_failed ? kExitFailed : kExitOk;
    Status status = write_run_and_commit(*trace, write_rest);
    if (!status) std::fprintf(stderr, "strata: %s\n", printable(status.error().message).c_str());
    written = static_cast<bool>(status);
  }
  if (!written) return kExitFailed;
  std::fprintf(stderr, "strata: trace written to %s\n", printable(trace->path()).c_str());

  const int printed = print_diagnose_verdict(trace->path(), format);
  const Existing existing = opt.output && !opt.force ? Existing::kRefuse : Existing::kReplace;
  const int paged = opt.no_html ? kExitOk : write_page_beside(trace->path(), existing);
  if (forwarder.received()) return 128 + forwarder.received();
  // The target's failure is the answer first: its status, as strata trace.
  if (recording && recording->target.shell_status() != 0) return recording->target.shell_status();
  if (printed != kExitOk) return printed;
  if (paged != kExitOk) return paged;
  return baseline.any_failed || record_failed ? kExitFailed : kExitOk;
}

}  // namespace

VerbRunner add_diagnose(CLI::App& app) {
  auto opt = std::make_shared<DiagnoseOptions>();
  auto* sub = app.add_subcommand(
      "diagnose", "Run the layers cheapest first and say where the time goes (a verdict)");
  sub->add_option("-o,--output", opt->output, "Trace file (default: strata-diagnoseN.sqlite)");
  sub->add_flag("--force", opt->force, "Overwrite the trace file if it exists");
  sub->add_option("--budget", opt->budget_s,
                  "Seconds the whole diagnosis may take; layers that would not fit are skipped");
  sub->add_option("--format", opt->format, "Verdict format: table or json")->capture_default_str();
  sub->add_option("--range", opt->range,
                  "Diagnose only inside the NVTX range or PyTorch record_function NAME");
  sub->add_option("--threshold", opt->thresholds,
                  "Override a rule threshold: NAME=VALUE (repeatable; docs/diagnose.md)");
  sub->add_option("-n,--runs", opt->runs,
                  "Baseline runs (default: 2, and a third when those two differ by more than 5 %)")
      ->check(CLI::Range(1, 1000));
  sub->add_flag("-q,--quiet", opt->quiet, "Discard the program's output in the baseline runs");
  sub->add_flag("--no-html", opt->no_html,
                "Write no HTML page beside the trace (default: TRACE's name with .html)");
  sub->add_option("command", opt->command, "-- CMD [ARGS...]")->required();
  sub->positionals_at_end(true);
  return [opt] { return run_diagnose(*opt); };
}

}  // namespace strata::cli
