// `strata report T --format html [-o FILE]`: gathers a trace's parts (the
// summary, the diagnosis, the report tables, the timeline, the CPU flame
// graphs, the kernel sections) from the libraries that already build them
// and writes src/html's one-file page. No report logic here: each table is
// its registry entry's or its report function's.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "analysis/multi_rank.h"
#include "cli/cpu_flags.h"
#include "common/atomic_file.h"
#include "store/trace_db.h"

namespace strata::cli {

// Writes the page to `output` (atomically; a file of that name is replaced
// unless `existing` says kRefuse), or to stdout when `output` is empty.
// Returns the exit status (2 with one line for an unreadable trace or an
// unwritable output).
int write_html_report(const store::TraceReader& reader, const std::string& file,
                      const std::string& output, const CpuReportFlags& flags,
                      Existing existing = Existing::kReplace);

// The page `strata diagnose` writes beside its trace: TRACE's name with
// ".html" for its extension (report.sqlite: report.html).
std::string page_beside(const std::string& trace);

// The per-rank page of several traces of one job: the registry's rank
// reports (rank_sum, collective_sum, straggler_sum) as sortable tables and
// the analysis' warnings; each rank's own page holds its timeline.
int write_html_rank_report(const std::vector<std::string>& files,
                           const analysis::MultiRankResult& result,
                           std::span<const analysis::RankInput> inputs, const std::string& output);

// `strata compare A B --format html`: the two traces side by side: the
// verdict, the wall-time test and each layer's table of A, B and the change
// (report/compare_report.h's tables), sortable and filterable.
int write_html_compare_report(const analysis::CompareSide& a, const analysis::CompareSide& b,
                              const analysis::Comparison& comparison, const std::string& output);

}  // namespace strata::cli
