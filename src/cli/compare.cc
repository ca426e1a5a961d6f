// `strata compare`: what changed between two traces (or two commands), layer
// by layer, largest change first, with a test of significance on the wall
// time, a verdict, and --gate for CI.
//   strata compare A.sqlite B.sqlite    two traces of any verb, or nsys exports
//   strata compare BENCH.sqlite         the two commands of a `bench --vs` trace
//   strata compare [-n N] --vs 'CMD_B' -- CMD_A
//                                       runs both interleaved (bench's runner),
//                                       stores the runs, compares them
// Loading is here (the store's readers, as `strata report` opens files);
// the comparison is analysis/compare.h, the printing report/compare_report.h.
#include "analysis/compare.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "analysis/cpu_profile_rows_convert.h"
#include "cli/bench_session.h"
#include "cli/cpu_flags.h"
#include "cli/report_html.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "report/compare_report.h"
#include "store/cpu_profile_rows.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct CompareFlags {
  std::vector<std::string> args;  // the trace files, or with --vs command A
  BenchSessionOptions session;
  int64_t limit = 15;
  std::optional<double> gate;  // percent
  double min_change = analysis::kDefaultMinChange * 100;
  bool native = false;
  bool full_names = false;
  std::string format = "table";
  bool html = false;  // --format html: the side-by-side page on stdout (cli/report_html.h)
};

// A trace file as one side: every layer strata compares, read before
// anything is printed (a damaged file is one line and exit 2).
struct LoadedTrace {
  analysis::CompareSide side;
  std::vector<store::BenchRun> runs;
  bool has_label_b = false;  // bench --vs runs: two commands
};

std::vector<std::string> command_of(const std::vector<store::BenchRun>& runs,
                                    const std::string& label) {
  for (const auto& r : runs) {
    if (r.label == label) return r.command;
  }
  return {};
}

Result<LoadedTrace> load_trace(const std::string& file, const CompareFlags& flags) {
  STRATA_ASSIGN_OR_RETURN(auto reader, store::TraceReader::open(file));
  LoadedTrace out;
  analysis::CompareSide& side = out.side;
  side.name = printable(file);
  side.nsys_export = reader.kind() == store::TraceKind::kNsysExport;
  const std::optional<store::RunInfo> run = reader.run();
  if (run) {
    side.verb = run->verb;
    side.command = run->command;
  }
  if (!side.nsys_export) {
    STRATA_ASSIGN_OR_RETURN(out.runs, reader.bench_runs());
  }
  for (const auto& r : out.runs) out.has_label_b |= r.label == "B";
  if (!out.runs.empty()) {
    side.wall = analysis::bench_samples(out.runs, "A");
    side.wall_source = "bench";
    side.command = command_of(out.runs, "A");
  } else if (run && run->end_ns > run->start_ns) {
    const double ms = static_cast<double>(run->end_ns - run->start_ns) / 1e6;
    side.wall = {{"wall", "ms", {ms}}};
    side.wall_source = run->verb;
  }

  STRATA_ASSIGN_OR_RETURN(auto cpu_rows, store::read_cpu_profile(reader));
  if (cpu_rows) {
    side.cpu = shown_profile(analysis::from_rows(*cpu_rows), flags.native, flags.full_names);
  }
  STRATA_ASSIGN_OR_RETURN(bool torch, store::torch_ops_present(reader));
  if (torch) {
    STRATA_ASSIGN_OR_RETURN(auto rows, store::load_torch_op_rows(reader));
    auto table = analysis::torch_op_table(rows);
    if (!table) return make_error(printable(file) + ": " + table.error().message);
    side.ops = std::move(table).value();
  }
  STRATA_ASSIGN_OR_RETURN(bool cuda, store::cuda_data_present(reader));
  if (cuda) {
    STRATA_ASSIGN_OR_RETURN(auto tables, store::load_gpu_tables(reader.handle(), reader.path()));
    side.gpu = std::move(tables);
  }
  return out;
}

// What a side holds, for the "nothing in common" line.
std::string holdings(const analysis::CompareSide& side) {
  std::vector<std::string> parts;
  if (side.wall_source == "bench") {
    parts.push_back("bench runs");
  } else if (!side.wall.empty()) {
    parts.push_back("the wall time of one `strata " + side.wall_source + "` run");
  }
  if (side.cpu) parts.push_back("a CPU profile");
  if (side.ops) parts.push_back("PyTorch ops");
  if (side.gpu) parts.push_back("CUDA trace data");
  if (parts.empty()) return "nothing strata compares";
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

// Compares, prints, and applies --gate: 0, or kExitRegression when the gate
// failed; 2 when the sides have nothing in common.
int print_comparison(const analysis::CompareSide& a, const analysis::CompareSide& b,
                     const CompareFlags& flags, report::Format format,
                     const std::vector<std::string>& notes = {}) {
  analysis::CompareOptions options;
  options.limit = static_cast<size_t>(flags.limit);
  options.min_change = flags.min_change / 100;
  const analysis::Comparison comparison = analysis::compare_sides(a, b, options);
  if (comparison.empty()) {
    return print_usage_error(a.name + " and " + b.name +
                             " have nothing in common to compare: " + a.name + " holds " +
                             holdings(a) + ", " + b.name + " holds " + holdings(b));
  }
  for (const auto& note : notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
  if (flags.html) {
    if (int status = write_html_compare_report(a, b, comparison, ""); status != kExitOk) {
      return status;
    }
  } else {
    auto rendered = report::render_comparison(a, b, comparison, format);
    std::fputs(rendered.out.c_str(), stdout);
    std::fflush(stdout);
    for (const auto& note : rendered.notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
  }
  if (!flags.gate) return kExitOk;
  const auto gate = analysis::check_gate(comparison.verdict, *flags.gate);
  std::fprintf(stderr, "strata: %s\n",
               report::gate_sentence(comparison.verdict, gate, *flags.gate).c_str());
  return gate.failed ? kExitRegression : kExitOk;
}

// The two commands of a `strata bench --vs` (or `strata compare --vs`) trace.
std::pair<analysis::CompareSide, analysis::CompareSide> command_sides(
    const std::vector<store::BenchRun>& runs, const std::string& name, const std::string& verb) {
  std::pair<analysis::CompareSide, analysis::CompareSide> sides;
  for (auto* side : {&sides.first, &sides.second}) {
    const std::string label = side == &sides.first ? "A" : "B";
    side->name = name.empty() ? "" : name + " (" + label + ")";
    side->verb = verb;
    side->command = command_of(runs, label);
    side->wall = analysis::bench_samples(runs, label);
    side->wall_source = "bench";
  }
  return sides;
}

int compare_files(const CompareFlags& flags, report::Format format) {
  if (flags.args.size() > 2) {
    return print_usage_error(
        "compare takes two traces (A, the base, and B, the new), or one `strata bench --vs` "
        "trace; " +
        std::to_string(flags.args.size()) + " files given");
  }
  std::vector<LoadedTrace> traces;
  for (const auto& file : flags.args) {
    auto loaded = load_trace(file, flags);
    if (!loaded) return print_usage_error(loaded.error().message);
    traces.push_back(std::move(loaded).value());
  }
  if (traces.size() == 1) {
    const LoadedTrace& t = traces.front();
    if (!t.has_label_b) {
      return print_usage_error(
          t.side.name +
          ": one file is compared only when it holds two commands (`strata bench --vs`, "
          "`strata compare --vs`); give two traces: strata compare A.sqlite B.sqlite");
    }
    auto [a, b] = command_sides(t.runs, t.side.name, t.side.verb);
    return print_comparison(a, b, flags, format);
  }
  std::vector<std::string> notes;
  for (const auto& t : traces) {
    if (t.has_label_b && (&t == &traces[0] || t.side.name != traces[0].side.name)) {
      notes.push_back(t.side.name +
                      " holds two commands (--vs): its command A's runs are compared; `strata "
                      "compare " +
                      t.side.name + "` compares its A and B");
    }
  }
  return print_comparison(traces[0].side, traces[1].side, flags, format, notes);
}

int compare_commands(const CompareFlags& flags, report::Format format) {
  BenchSessionOptions session = flags.session;
  session.command = flags.args;
  session.verb = "compare";
  if (session.command.empty()) {
    return print_usage_error(
        "compare --vs 'CMD_B' needs command A too: strata compare [options] --vs 'CMD_B ARGS' "
        "-- CMD_A [ARGS...]");
  }
  return run_bench_session(session, [&](const std::vector<store::BenchRun>& runs) {
    auto [a, b] = command_sides(runs, "", "compare");
    return print_comparison(a, b, flags, format);
  });
}

}  // namespace

VerbRunner add_compare(CLI::App& app) {
  auto flags = std::make_shared<CompareFlags>();
  BenchSessionOptions& session = flags->session;
  auto* sub = app.add_subcommand(
      "compare", "Verify: what changed between two traces or two commands, and is it significant");
  sub->add_option("args", flags->args,
                  "A.sqlite B.sqlite (base, new), one `bench --vs` trace, or with --vs: -- CMD_A "
                  "[ARGS...]");
  sub->add_option("--limit", flags->limit, "Rows per section, largest change first (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--gate", flags->gate,
                  "Exit 3 when B's wall time is significantly more than PCT % above A's (CI)")
      ->check(CLI::Range(0.0, 1e9));
  sub->add_option("--min-change", flags->min_change,
                  "A significant change smaller than PCT % is no change in the verdict")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  sub->add_flag("--native", flags->native,
                "Python programs: compare the native stacks, not the Python view");
  sub->add_flag("--full-names", flags->full_names, "C++ names as demangled, not shortened");
  sub->add_option("--format", flags->format,
                  "Report format: table, csv, json, or html (both sides on one page, on stdout)")
      ->capture_default_str();
  sub->add_option("--vs", session.vs,
                  "Compare two commands: run A (after --) and B interleaved, as bench --vs");
  sub->add_option("-n,--runs", session.runs, "With --vs: measured runs of each command")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option("--warmup", session.warmups, "With --vs: warm-up runs of each command")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  sub->add_option("--metric", session.metrics,
                  "With --vs: also compare KEY=VALUE numbers the programs print (repeatable)");
  sub->add_option("-o,--output", session.output,
                  "With --vs: trace file of the runs (default: strata-compareN.sqlite)");
  sub->add_flag("--force", session.force, "With --vs: overwrite the trace file if it exists");
  sub->add_flag("-q,--quiet", session.quiet, "With --vs: discard the programs' stdout and stderr");
  return [flags, sub] {
    flags->html = flags->format == "html";
    auto format = report::parse_format(flags->html ? "table" : flags->format);
    if (!format) return print_usage_error(format.error().message);
    if (flags->session.vs) return compare_commands(*flags, *format);
    for (const char* name : {"--runs", "--warmup", "--metric", "--output", "--force", "--quiet"}) {
      if (sub->get_option(name)->count() > 0) {
        return print_usage_error(std::string(name) +
                                 " applies to two commands (--vs 'CMD_B' -- CMD_A), not to "
                                 "traces");
      }
    }
    if (flags->args.empty()) {
      return print_usage_error(
          "compare needs two traces (strata compare A.sqlite B.sqlite) or two commands "
          "(strata compare --vs 'CMD_B' -- CMD_A)");
    }
    return compare_files(*flags, *format);
  };
}

}  // namespace strata::cli
