// `strata report FILE`: prints a recorded trace's reports again: the bench
// tables of a `strata bench` trace, the pstats tables of a `strata cpu` one,
// and nsys's GPU summaries (--report NAME,...) of a CUDA trace or of an
// Nsight Systems SQLite export.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "analysis/bench.h"
#include "cli/cpu_flags.h"
#include "cli/cpu_profile_rows_convert.h"
#include "cli/gpu_report_print.h"
#include "cli/verbs.h"
#include "report/bench_report.h"
#include "store/cpu_profile_rows.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct ReportOptions {
  std::string file;
  std::vector<std::string>
      reports;  // GPU report names; empty: the --stats set when CUDA data exists
  CpuReportFlags cpu;
};

int run_report(const ReportOptions& opt) {
  auto reader = store::TraceReader::open(opt.file);
  if (!reader) {
    std::fprintf(stderr, "strata: %s\n", reader.error().message.c_str());
    return kExitUsage;
  }
  if (!opt.reports.empty() || has_cuda_data(*reader)) {
    auto format = report::parse_format(opt.cpu.format);
    if (!format) {
      std::fprintf(stderr, "strata: %s\n", format.error().message.c_str());
      return kExitUsage;
    }
    int status = print_gpu_reports(
        *reader, opt.reports.empty() ? default_gpu_reports() : opt.reports, *format);
    // Asked-for GPU reports are the whole answer; otherwise CPU/bench tables follow.
    if (status != kExitOk || !opt.reports.empty()) return status;
  }
  bool printed = false;
  if (reader->kind() == store::TraceKind::kStrata) {
    auto runs = reader->bench_runs();
    if (!runs) {
      std::fprintf(stderr, "strata: %s\n", runs.error().message.c_str());
      return kExitUsage;
    }
    if (!runs->empty()) {
      auto format = report::parse_format(opt.cpu.format);
      if (!format) {
        std::fprintf(stderr, "strata: %s\n", format.error().message.c_str());
        return kExitUsage;
      }
      // The metric keys are the ones the runs carry, in first-seen order.
      std::vector<std::string> keys;
      size_t measured = 0, warmups = 0;
      for (const auto& r : *runs) {
        for (const auto& [key, value] : r.metrics) {
          if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        }
        if (r.label == "A") (r.warmup ? warmups : measured) += 1;
      }
      auto summary = analysis::summarize_bench(*runs, keys);
      std::fputs(report::render_bench(summary, {measured, warmups}, *format).c_str(), stdout);
      printed = true;
    }
  }
  auto cpu = store::read_cpu_profile(*reader);
  if (!cpu) {
    std::fprintf(stderr, "strata: %s\n", cpu.error().message.c_str());
    return kExitUsage;
  }
  if (cpu->has_value()) {
    if (printed) std::fputs("\n", stdout);
    int status = print_cpu_profile(from_rows(**cpu), opt.cpu);
    if (status != kExitOk) return status;
    printed = true;
  }
  if (!printed) {
    std::fprintf(stderr, "strata: %s: no bench runs or CPU samples to report\n", opt.file.c_str());
  }
  return kExitOk;
}

}  // namespace

VerbRunner add_report(CLI::App& app) {
  auto opt = std::make_shared<ReportOptions>();
  auto* sub = app.add_subcommand("report", "Print the reports of a recorded trace again");
  sub->add_option("file", opt->file, "Trace file")->required();
  sub->add_option("--report", opt->reports,
                  "GPU reports: cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, "
                  "cuda_gpu_mem_size_sum, cuda_kern_exec_sum, nvtx_sum, op_sum")
      ->delimiter(',');
  add_cpu_report_flags(sub, opt->cpu);
  return [opt] { return run_report(*opt); };
}

}  // namespace strata::cli
