// `strata report T --format html [-o FILE]`: gathers a trace's parts (the
// summary, the diagnosis, the report tables, the timeline, the CPU flame
// graphs, the kernel sections) from the libraries that already build them
// and writes src/html's one-file page. No report logic here: each table is
// its registry entry's or its report function's.
#pragma once

#include <string>

#include "cli/cpu_flags.h"
#include "store/trace_db.h"

namespace strata::cli {

// Writes the page to `output` (atomically, replacing a file of that name),
// or to stdout when `output` is empty. Returns the exit status (2 with one
// line for an unreadable trace or an unwritable output).
int write_html_report(const store::TraceReader& reader, const std::string& file,
                      const std::string& output, const CpuReportFlags& flags);

}  // namespace strata::cli
