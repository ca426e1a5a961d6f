// The report flags `strata cpu` and `strata report` share, and the one way
// both print a CPU profile.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/cpu_profile.h"

namespace CLI {
class App;
}

namespace strata::cli {

struct CpuReportFlags {
  std::string sort = "tottime";
  int64_t limit = 25;
  std::string filter;
  bool threads = false;
  bool callers = false;     // pstats' print_callers instead of the function table
  bool callees = false;     // pstats' print_callees
  bool imports = false;     // import time per module, as python -X importtime
  bool lines = false;       // one row per sampled line: file:LINE(function)
  std::string annotate;     // a function's source with the time of each line
  bool full_names = false;  // C++ names as demangled, default template arguments and all
  bool native = false;      // Python programs: the mixed stacks, interpreter frames and all
  // Idle-spinning samples (analysis/idle_frames.h) listed in the tables
  // instead of left out, as py-spy's --idle.
  bool idle = false;
  std::string format = "table";
};

void add_cpu_report_flags(CLI::App* sub, CpuReportFlags& flags);

// The profile as the reports show it: the Python view of a Python program
// unless `native` (analysis/python_view.h), C++ names shortened unless
// `full_names`. The exports make the same one.
analysis::Profile shown_profile(const analysis::Profile& recorded, bool native, bool full_names);

// Prints the pstats-style report to stdout; returns the exit status (2 for a
// bad --sort/--filter/--format, with a one-line message).
int print_cpu_profile(const analysis::Profile& profile, const CpuReportFlags& flags);
// The same report as text in flags.format, for a caller that prints it as
// one section of a document (report/report_document.h).
int render_cpu_profile_text(const analysis::Profile& profile, const CpuReportFlags& flags,
                            std::string* out);

}  // namespace strata::cli
