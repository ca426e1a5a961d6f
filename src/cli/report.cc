// `strata report FILE`: prints a recorded trace's reports again: the bench
// tables of a `strata bench` trace, the pstats tables of a `strata cpu` one,
// and nsys's GPU summaries (--report NAME,...) of a CUDA trace or of an
// Nsight Systems SQLite export.
// `strata report FILE FILE...`: `strata cpu` traces merge into one profile
// (pstats.Stats(a, b)); other traces are the ranks of one distributed job,
// one file per rank, side by side: rank_sum, collective_sum, straggler_sum
// (analysis/multi_rank.h, docs/multi-gpu.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "analysis/cpu_merge.h"
#include "analysis/cpu_profile_rows_convert.h"
#include "analysis/multi_rank.h"
#include "analysis/rank_input.h"
#include "analysis/recorded_bench.h"
#include "analysis/torch_op_table.h"
#include "cli/cpu_flags.h"
#include "cli/diagnose_print.h"
#include "cli/gpu_report_print.h"
#include "cli/kernel_report_print.h"
#include "cli/report_html.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "report/bench_report.h"
#include "report/registry.h"
#include "report/report_document.h"
#include "store/cpu_profile_rows.h"
#include "store/gpu_tables.h"
#include "store/kernel_metric_rows.h"
#include "store/rank_rows.h"
#include "store/torch_op_rows.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> files;
  std::string file;  // the first of `files`
  std::vector<std::string>
      reports;  // GPU report names; empty: the --stats set when CUDA data exists
  CpuReportFlags cpu;
  bool limit_given = false;  // --limit on the command line (torch's table keeps 100 rows else)
  // -o: the page of --format html (a file), or for --format csv the
  // directory of one file per report.
  std::string output;
  bool force = false;
  bool group_by_shape = false;
  int group_by_stack = 0;
};

// The op_sum flags as torch_op_report takes them. --sort's default
// (tottime) is the CPU table's, not a choice of torch's order.
TorchOpFlags torch_flags(const ReportOptions& opt) {
  TorchOpFlags flags;
  if (opt.cpu.sort != "tottime") flags.sort = opt.cpu.sort;
  if (opt.limit_given) flags.limit = opt.cpu.limit;
  flags.group_by_shape = opt.group_by_shape;
  flags.group_by_stack = opt.group_by_stack;
  return flags;
}

DocumentOutput output_of(const ReportOptions& opt) {
  return {opt.output, report::report_file_base(opt.file), opt.force};
}

// Everything is read before anything is printed: a damaged file gives one
// line and exit 2, never a report with a layer missing or cut short.
int run_report(const ReportOptions& given) {
  auto reader = store::TraceReader::open(given.file);
  if (!reader) return print_usage_error(reader.error().message);
  // One self-contained page of every layer (src/html); --report does not apply.
  if (given.cpu.format == "html") {
    if (!given.reports.empty()) {
      return print_usage_error("--format html shows every report of the trace; drop --report");
    }
    return write_html_report(*reader, given.file, given.output, given.cpu);
  }
  auto format = report::parse_format(given.cpu.format);
  if (!format) return print_usage_error(format.error().message);
  // "kernels" picks the kernel sections of `strata kernels`; the other names
  // are GPU reports. Without --report, a trace with profiled launches prints them.
  ReportOptions opt = given;
  // A trace strata diagnose wrote: `--report diagnosis` is its whole verdict
  // again (diagnose_print.h), not the GPU timeline's findings alone. CSV has
  // no verdict shape: the GPU report's rows, as for any trace.
  if (std::find(opt.reports.begin(), opt.reports.end(), "diagnosis") != opt.reports.end() &&
      *format != report::Format::kCsv) {
    auto diagnosed = is_diagnose_trace(*reader);
    if (!diagnosed) return print_usage_error(printable(diagnosed.error().message));
    if (*diagnosed) {
      int status = print_diagnose_verdict(opt.file, *format);
      std::erase(opt.reports, std::string("diagnosis"));
      if (status != kExitOk || opt.reports.empty()) return status;
      std::fputs("\n", stdout);
    }
  }
  // op_sum of a trace with PyTorch ops is torch.profiler's table, built from
  // strata_torch_ops rather than the GPU tables' NVTX ranges; it is one of
  // the default reports too, so a trace of a PyTorch program without CUDA
  // (CPU-only torch) still prints it.
  std::optional<report::GpuReport> torch_table;
  const bool op_sum = given.reports.empty() || std::find(opt.reports.begin(), opt.reports.end(),
                                                         "op_sum") != opt.reports.end();
  if (op_sum || opt.group_by_shape || opt.group_by_stack > 0) {
    auto present = store::torch_ops_present(*reader);
    if (!present) return print_usage_error(present.error().message);
    if (!*present && (opt.group_by_shape || opt.group_by_stack > 0)) {
      return print_usage_error(printable(opt.file) +
                               ": --group-by-shape and --group-by-stack need PyTorch ops (the "
                               "trace has none)");
    }
    if (*present && op_sum) {
      int status = kExitOk;
      torch_table = torch_op_report(*reader, opt.file, torch_flags(opt), *format, &status);
      if (!torch_table) return status;
      std::erase(opt.reports, std::string("op_sum"));
    }
  }
  bool kernels = false;
  std::erase_if(opt.reports, [&](const std::string& name) {
    if (!report::find_report(name, report::ReportInput::kKernelProfiles)) return false;
    kernels = true;
    return true;
  });
  // A probe that cannot read the file is the answer (exit 2), never "no such
  // data": a damaged trace must not pass for one with fewer layers.
  bool profiles = false;
  bool cuda = false;
  if (given.reports.empty()) {
    auto present = store::kernel_profiles_present(*reader);
    if (!present) return print_usage_error(present.error().message);
    profiles = *present;
    auto gpu = store::cuda_data_present(*reader);
    if (!gpu) return print_usage_error(gpu.error().message);
    cuda = *gpu;
  }
  const bool print_kernels = kernels || profiles;
  // Asked-for reports are the whole answer; kernel sections alone are too
  // unless the trace also holds a CUDA timeline.
  const bool print_gpu = !opt.reports.empty() || (given.reports.empty() && cuda);
  report::ReportDocument document(*format);
  if (torch_table && !given.reports.empty() && !print_gpu && !kernels) {
    add_torch_op_report(*torch_table, document);
    return emit_document(document, output_of(opt));
  }
  const bool print_rest = given.reports.empty() && !(profiles && !cuda);

  GpuReportInput gpu;
  if (print_gpu) {
    std::vector<std::string> names = opt.reports;
    if (names.empty()) {
      names = report::default_gpu_reports();
      if (torch_table) std::erase(names, std::string("op_sum"));  // printed as torch's table
    }
    int status = load_gpu_reports(*reader, names, gpu);
    if (status != kExitOk) return status;
  }
  std::vector<store::BenchRun> runs;
  std::optional<store::CpuProfileRows> cpu;
  if (print_rest) {
    if (reader->kind() == store::TraceKind::kStrata) {
      auto read = reader->bench_runs();
      if (!read) return print_usage_error(read.error().message);
      runs = std::move(read).value();
    }
    auto read = store::read_cpu_profile(*reader);
    if (!read) return print_usage_error(read.error().message);
    cpu = std::move(read).value();
  }

  if (print_kernels) {
    std::string text;
    int status = render_kernel_profiles_text(*reader, report::all_kernel_sections(), *format,
                                             KernelPrintContext{}, &text);
    if (status != kExitOk) return status;
    document.add("kernels", report::section_title("Kernel Sections", "kernels"), std::move(text));
  }
  if (print_gpu) add_gpu_reports(*reader, gpu, document);
  if (torch_table) add_torch_op_report(*torch_table, document);
  if (print_rest) {
    if (!runs.empty()) {
      auto bench = analysis::summarize_recorded_bench(runs);
      document.add("bench", report::section_title("Bench", "bench"),
                   report::render_bench(bench.summary, {bench.measured, bench.warmups}, *format));
    }
    if (cpu) {
      std::string text;
      int status = render_cpu_profile_text(analysis::from_rows(*cpu), opt.cpu, &text);
      if (status != kExitOk) return status;
      document.add("cpu", report::section_title("CPU Profile", "cpu"), std::move(text));
    }
    if (runs.empty() && !cpu && !torch_table) {
      std::fprintf(stderr, "strata: %s: no bench runs or CPU samples to report\n",
                   printable(opt.file).c_str());
    }
  }
  return emit_document(document, output_of(opt));
}

// FILE's CPU profile when it is a `strata cpu` trace (a CPU profile and no
// GPU timeline): several of those merge, where other traces are ranks of one
// job. nullopt for any other trace.
Result<std::optional<analysis::Profile>> cpu_only_profile(const std::string& file) {
  STRATA_ASSIGN_OR_RETURN(auto reader, store::TraceReader::open(file));
  STRATA_ASSIGN_OR_RETURN(bool cuda, store::cuda_data_present(reader));
  if (cuda) return std::optional<analysis::Profile>();
  STRATA_ASSIGN_OR_RETURN(auto rows, store::read_cpu_profile(reader));
  if (!rows) return std::optional<analysis::Profile>();
  return std::optional<analysis::Profile>(analysis::from_rows(*rows));
}

// Several `strata cpu` traces as one profile, as pstats.Stats(a, b) adds
// them; `first` is the first file's, already read.
int run_merged_cpu_report(const ReportOptions& opt, analysis::Profile first) {
  if (!opt.reports.empty()) {
    return print_usage_error("--report names GPU or rank reports; CPU profiles have none");
  }
  auto kind = [](const analysis::Profile& p) {
    return analysis::is_sampled(p.mode) ? "a sampled profile" : "an --instrument profile";
  };
  std::vector<analysis::Profile> profiles;
  profiles.push_back(std::move(first));
  for (size_t i = 1; i < opt.files.size(); ++i) {
    const std::string& file = opt.files[i];
    auto reader = store::TraceReader::open(file);
    if (!reader) return print_usage_error(reader.error().message);
    auto rows = store::read_cpu_profile(*reader);
    if (!rows) return print_usage_error(rows.error().message);
    if (!*rows)
      return print_usage_error(printable(file) + ": no CPU profile to merge with " +
                               printable(opt.files.front()) + "'s");
    profiles.push_back(analysis::from_rows(**rows));
    if (analysis::is_sampled(profiles.back().mode) != analysis::is_sampled(profiles.front().mode)) {
      return print_usage_error(printable(file) + " is " + kind(profiles.back()) + " and " +
                               printable(opt.files.front()) + " " + kind(profiles.front()) +
                               ": they cannot be merged");
    }
  }
  auto merged = analysis::merge_profiles(std::move(profiles));
  if (!merged) return print_usage_error(merged.error().message);
  auto format = report::parse_format(opt.cpu.format);
  if (!format) return print_usage_error(format.error().message);
  std::string text;
  if (int status = render_cpu_profile_text(*merged, opt.cpu, &text); status != kExitOk) {
    return status;
  }
  report::ReportDocument document(*format);
  document.add("cpu", report::section_title("CPU Profile", "cpu"), std::move(text));
  DocumentOutput output = output_of(opt);
  output.base = report::report_file_base(opt.files.front());
  return emit_document(document, output);
}

int run_multi_report(const ReportOptions& opt) {
  auto first_cpu = cpu_only_profile(opt.files.front());
  if (!first_cpu) return print_usage_error(first_cpu.error().message);
  if (*first_cpu) return run_merged_cpu_report(opt, std::move(**first_cpu));
  std::vector<const report::ReportEntry*> entries;
  for (const auto& name : opt.reports) {
    const auto* entry = report::find_report(name, report::ReportInput::kRanks);
    if (entry == nullptr) {
      std::fprintf(stderr, "strata: unknown --report '%s' with several files (known: %s)\n",
                   printable(name).c_str(),
                   report::known_reports(report::ReportInput::kRanks).c_str());
      return kExitUsage;
    }
    entries.push_back(entry);
  }
  if (entries.empty()) {
    for (const auto& name : report::report_names(report::ReportInput::kRanks)) {
      entries.push_back(report::find_report(name, report::ReportInput::kRanks));
    }
  }
  const bool html = opt.cpu.format == "html";
  auto format = report::parse_format(html ? "table" : opt.cpu.format);
  if (!format) return print_usage_error(format.error().message);
  std::vector<analysis::RankInput> inputs;
  for (const auto& file : opt.files) {
    auto in = store::load_rank_file(file);
    if (!in) return print_usage_error(in.error().message);
    inputs.push_back(analysis::rank_input(std::move(in).value()));
  }
  auto result = analysis::analyze_ranks(inputs);
  for (const auto& w : result.warnings) {
    std::fprintf(stderr, "strata: warning: %s\n", printable(w).c_str());
  }
  if (html) return write_html_rank_report(opt.files, result, inputs, opt.output);
  report::ReportDocument document(*format);
  for (const auto* entry : entries) {
    report::GpuReport r = entry->from_ranks({result, inputs, static_cast<size_t>(opt.cpu.limit)});
    document.add(entry->name, r.table.title, report::render_gpu_report(r, *format));
    if (*format != report::Format::kTable) {
      for (const auto& note : r.notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
    }
  }
  DocumentOutput output = output_of(opt);
  output.base = report::report_file_base(opt.files.front());
  return emit_document(document, output);
}

}  // namespace

VerbRunner add_report(CLI::App& app) {
  auto opt = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand("report", "Print the reports of a recorded trace again");
  sub->add_option("files", opt->files,
                  "Trace file; several files: CPU profiles to merge, or the ranks of one job, one "
                  "file per rank")
      ->required();
  sub->add_option("--report", opt->reports, report::report_flag_help())->delimiter(',');
  add_cpu_report_flags(sub, opt->cpu);
  sub->get_option("--format")->description(
      "Report format: table, csv, json, or html (one self-contained page; -o FILE)");
  sub->add_flag("--group-by-shape", opt->group_by_shape,
                "op_sum of PyTorch ops: one row per op and input shapes (recorded with "
                "--record-shapes)");
  sub->add_option("--group-by-stack", opt->group_by_stack,
                  "op_sum of PyTorch ops: one row per op and its first N Python frames "
                  "(recorded with --with-stack)")
      ->check(CLI::PositiveNumber);
  sub->add_option("-o,--output", opt->output,
                  "With --format html: the page's file (replaced if it exists; default stdout). "
                  "With --format csv: write one file per report into this directory, "
                  "DIR/TRACE_REPORTNAME.csv, as nsys stats names them");
  sub->add_flag("--force", opt->force, "Overwrite report files that exist (--format csv)");
  return [opt, sub] {
    if (!opt->output.empty() && opt->cpu.format != "csv" && opt->cpu.format != "html") {
      return print_usage_error(
          "-o is for --format html (the page) or --format csv (a directory, one file per report)");
    }
    if (auto* limit = sub->get_option_no_throw("--limit")) opt->limit_given = limit->count() > 0;
    if (opt->files.size() > 1) {
      return run_multi_report(*opt);
    }
    opt->file = opt->files.front();
    return run_report(*opt);
  };
}

}  // namespace strata::cli
