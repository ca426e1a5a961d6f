// `strata bench`: the baseline step. Runs a command (and with --vs a second
// one, interleaved A B A B ...) several times after warm-ups, measures wall,
// user and sys time, peak RSS and page faults from wait4, collects KEY=VALUE
// metrics the program prints, reports min/median/max and per-pair A/B ratios,
// and stores every run in the trace database.
#include "analysis/bench.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli/bench_session.h"
#include "cli/verbs.h"
#include "report/bench_report.h"

namespace strata::cli {
namespace {

struct BenchOptions {
  BenchSessionOptions session;
  std::string format = "table";
};

int run_bench(const BenchOptions& opt) {
  auto format = report::parse_format(opt.format);
  if (!format) {
    std::fprintf(stderr, "strata: %s\n", format.error().message.c_str());
    return kExitUsage;
  }
  const BenchSessionOptions& session = opt.session;
  return run_bench_session(session, [&](const std::vector<store::BenchRun>& runs) {
    auto summary = analysis::summarize_bench(runs, session.metrics);
    const report::BenchReportContext context{static_cast<size_t>(session.runs),
                                             static_cast<size_t>(session.warmups)};
    std::fputs(report::render_bench(summary, context, *format).c_str(), stdout);
    return kExitOk;
  });
}

}  // namespace

VerbRunner add_bench(CLI::App& app) {
  auto opt = std::make_shared<BenchOptions>();
  BenchSessionOptions& session = opt->session;
  auto* sub = app.add_subcommand("bench", "Baseline: time a command (and compare with another)");
  sub->add_option("-n,--runs", session.runs, "Measured runs of each command")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option("--warmup", session.warmups, "Warm-up runs of each command, not measured")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  sub->add_option("--vs", session.vs,
                  "Second command (B), run interleaved with A: --vs 'CMD2 ARGS'");
  sub->add_option("--metric", session.metrics,
                  "Also collect KEY=VALUE numbers the program prints on stdout (repeatable)");
  sub->add_option("-o,--output", session.output, "Trace file (default: strata-benchN.sqlite)");
  sub->add_flag("--force", session.force, "Overwrite the trace file if it exists");
  sub->add_flag("-q,--quiet", session.quiet, "Discard the program's stdout and stderr");
  sub->add_option("--format", opt->format, "Report format: table, csv or json")
      ->capture_default_str();
  sub->add_option("command", session.command, "-- CMD [ARGS...]")->required();
  sub->positionals_at_end(true);
  return [opt] { return run_bench(*opt); };
}

}  // namespace strata::cli
