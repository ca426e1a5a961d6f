// The verdict of a trace `strata diagnose` wrote, built from what the trace
// holds (the baseline's runs, the CPU samples, the GPU tables, the PyTorch
// ops, the layer log and the settings) and printed: by the verb after its
// runs and by `strata report FILE --report diagnosis`, one code path, so
// that both print the same verdict.
#pragma once

#include <optional>
#include <string>

#include "analysis/diagnose_verdict.h"
#include "report/table.h"
#include "store/trace_db.h"

namespace strata::cli {

// Whether `reader`'s file was written by strata diagnose. A file that cannot
// be read is an error (exit 2), never "no".
Result<bool> is_diagnose_trace(const store::TraceReader& reader);

// The verdict of a diagnose trace, for the HTML page (cli/report_html.h).
Result<analysis::DiagnoseVerdict> load_verdict(const store::TraceReader& reader);

// Prints the verdict on stdout. `range` replaces the stored --range when
// given. Exit status: 0; 2 when the file cannot be read or the range names
// nothing in it (one line on stderr).
int print_diagnose_verdict(const std::string& path, report::Format format,
                           const std::optional<std::string>& range = std::nullopt);

}  // namespace strata::cli
