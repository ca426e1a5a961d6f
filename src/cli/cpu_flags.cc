#include "cli/cpu_flags.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>

#include "analysis/cpp_names.h"
#include "analysis/cpu_callers.h"
#include "analysis/cpu_lines.h"
#include "analysis/cpu_pstats.h"
#include "analysis/idle_frames.h"
#include "analysis/python_imports.h"
#include "analysis/python_view.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "report/cpu_annotate_report.h"
#include "report/cpu_callers_report.h"
#include "report/cpu_report.h"
#include "report/python_imports_report.h"

namespace strata::cli {

void add_cpu_report_flags(CLI::App* sub, CpuReportFlags& flags) {
  sub->add_option("--sort", flags.sort,
                  "Sort keys, as pstats' sort_stats takes them: " +
                      std::string(analysis::cpu_sort_key_names()))
      ->type_name("KEY[,KEY...]")
      ->capture_default_str();
  // Signed, so that "-1" is refused instead of wrapping to "all rows"; not
  // CLI::NonNegativeNumber, whose message prints its range as 1.8e308 digits.
  const CLI::Validator row_count(
      [](std::string& value) -> std::string {
        return value.starts_with('-') ? "must be 0 (all rows) or more, not " + value : "";
      },
      "");
  sub->add_option("--limit", flags.limit, "Rows to print (0: all)")
      ->check(row_count)
      ->type_name("N")
      ->capture_default_str();
  sub->add_option("--filter", flags.filter, "Only functions whose label matches this regex");
  sub->add_flag("--threads", flags.threads, "Rows per thread, and a table of threads");
  sub->add_flag("--callers", flags.callers,
                "For each listed function, the functions that called it (pstats' print_callers)");
  sub->add_flag("--callees", flags.callees,
                "For each listed function, the functions it called (pstats' print_callees)");
  sub->add_flag("--imports", flags.imports,
                "Python programs: import time per imported module, as python -X importtime "
                "prints it (self and cumulative, in us)");
  sub->add_flag("--lines", flags.lines,
                "One row per source line (file:LINE(function), LINE where the samples were), "
                "from the DWARF line tables");
  sub->add_option("--annotate", flags.annotate,
                  "The source of the function whose name contains FUNC, with the time of each "
                  "line (perf annotate, line_profiler)")
      ->type_name("FUNC");
  sub->add_flag("--full-names", flags.full_names,
                "C++ names as demangled (default: std::string for std::__cxx11::basic_string<char, "
                "...>, no default template arguments)");
  sub->add_flag("--native", flags.native,
                "Python programs: the mixed stacks, interpreter frames and all, as py-spy "
                "--native shows them (default: Python functions and the builtins they call, "
                "as cProfile shows them)");
  sub->add_flag("--idle", flags.idle,
                "List the samples of idle-spinning threads (OpenBLAS's thread server, OpenMP "
                "workers at a barrier, sched_yield loops, waits) in the tables; by default they "
                "are left out and the header says how much time they took, as py-spy does");
  sub->add_option("--format", flags.format, "Report format: table, csv or json")
      ->capture_default_str();
}

analysis::Profile shown_profile(const analysis::Profile& recorded, bool native, bool full_names) {
  std::optional<analysis::Profile> python;
  if (!native) python = analysis::python_view(recorded);
  const analysis::Profile& viewed = python ? *python : recorded;
  return full_names ? viewed : analysis::with_short_names(viewed);
}

int render_cpu_profile_text(const analysis::Profile& recorded, const CpuReportFlags& flags,
                            std::string* out) {
  auto format = report::parse_format(flags.format);
  if (!format) {
    std::fprintf(stderr, "strata: %s\n", format.error().message.c_str());
    return kExitUsage;
  }
  auto sort = analysis::parse_cpu_sort(flags.sort);
  if (!sort) {
    std::fprintf(stderr, "strata: %s\n", sort.error().message.c_str());
    return kExitUsage;
  }
  if (flags.callers + flags.callees + flags.threads + flags.imports + !flags.annotate.empty() > 1) {
    std::fprintf(stderr,
                 "strata: --callers, --callees, --threads, --imports and --annotate are separate "
                 "views: give one\n");
    return kExitUsage;
  }
  if ((flags.imports || !flags.annotate.empty()) && (flags.lines || !flags.filter.empty())) {
    std::fprintf(stderr,
                 "strata: --lines and --filter apply to the function tables, not to --imports or "
                 "--annotate\n");
    return kExitUsage;
  }
  const analysis::Profile viewed = shown_profile(recorded, flags.native, flags.full_names);
  if (!flags.annotate.empty()) {
    auto annotation = analysis::annotate(viewed, flags.annotate);
    if (!annotation) {
      std::fprintf(stderr, "strata: %s\n", printable(annotation.error().message).c_str());
      return kExitUsage;
    }
    *out = report::render_annotation(*annotation, *format);
    return kExitOk;
  }
  const analysis::Profile profile = flags.lines ? analysis::by_sample_line(viewed) : viewed;
  if (flags.imports) {
    *out = report::render_python_imports(analysis::python_imports(profile),
                                         static_cast<size_t>(flags.limit), *format);
    return kExitOk;
  }
  analysis::CpuTableOptions options;
  options.sort = *sort;
  options.limit = static_cast<size_t>(flags.limit);
  options.filter = flags.filter;
  options.per_thread = flags.threads;
  const analysis::Profile listed = flags.idle ? profile : analysis::without_idle(profile);
  auto table = analysis::cpu_function_table(listed, options);
  if (!table) {
    std::fprintf(stderr, "strata: %s\n", table.error().message.c_str());
    return kExitUsage;
  }
  // The header and the thread table tell the whole profile, idle time
  // included; the function tables list it only with --idle.
  analysis::CpuHeader header = analysis::cpu_header(profile);
  header.idle_shown = flags.idle;
  if (flags.callers || flags.callees) {
    *out = report::render_cpu_calls(
        header, *table, analysis::cpu_call_edges(listed, options.tids),
        flags.callers ? report::CallView::kCallers : report::CallView::kCallees, *format);
  } else {
    std::vector<analysis::CpuThreadRow> threads;
    if (flags.threads) threads = analysis::cpu_threads(profile);
    *out = report::render_cpu_profile(header, *table, threads, *format);
  }
  return kExitOk;
}

int print_cpu_profile(const analysis::Profile& profile, const CpuReportFlags& flags) {
  std::string out;
  if (int status = render_cpu_profile_text(profile, flags, &out); status != kExitOk) return status;
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);  // before strata's own stderr lines, so a terminal shows them in order
  return kExitOk;
}

}  // namespace strata::cli
