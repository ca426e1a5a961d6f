// Renders the CPU profile the way show_pstats prints cProfile output: the
// header ("N function calls (M primitive calls) in T seconds", "Ordered by:",
// "List reduced from ...") and the table
//   ncalls  tottime  percall  cumtime  percall  filename:lineno(function)
// with times in seconds, 3 decimals.
//
// Sampling mode keeps pstats' column names rather than inventing new ones,
// so users' eyes and scripts find the same columns; what changes is stated
// once in the header ("ncalls = samples ..."): ncalls counts samples with
// the function as leaf and times are samples x period. A per-cell suffix
// such as "412s" was rejected: it reads like seconds next to the time
// columns and would make the CSV/JSON ncalls non-numeric.
//
// CSV and JSON cannot hold two columns named "percall" (JSON objects are
// keyed by column name), so there they are tottime_percall and
// cumtime_percall, ncalls is a plain number and the primitive calls (pstats'
// "pcalls"; sampled: "samples", inclusive) get their own column.
#pragma once

#include <string>
#include <vector>

#include "analysis/cpu_pstats.h"
#include "report/table.h"

namespace strata::report {

Table cpu_functions_table(const analysis::CpuTable& table, Format format);
Table cpu_threads_table(const std::vector<analysis::CpuThreadRow>& threads,
                        analysis::ProfileMode mode);
Table cpu_shares_table(const std::vector<analysis::SelfShare>& shares, analysis::ProfileMode mode);

// A pstats label ("dir/file.cc:12(function)") for a column too narrow for
// the widest label: the file's directories go (from every label, short or
// not, so that rows read alike), then what is still too wide is cut ("…").
std::string fit_pstats_label(const std::string& label, size_t columns);

// The lines above the function table (table format), ending in a blank line.
std::string cpu_header_text(const analysis::CpuHeader& header, const analysis::CpuTable& table);

// The whole report. `threads` empty = no threads table. Table format: header,
// functions, threads; CSV: the functions table, then the threads table after
// a blank line; JSON: {"header": {...}, "functions": [...], "threads": [...]}.
std::string render_cpu_profile(const analysis::CpuHeader& header, const analysis::CpuTable& table,
                               const std::vector<analysis::CpuThreadRow>& threads, Format format);

}  // namespace strata::report
