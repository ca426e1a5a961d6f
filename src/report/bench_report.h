// Renders `strata bench` results: per-command min/median/max of each
// quantity, the A/B ratio per interleaved pair, and every failed run.
#pragma once

#include <string>
#include <string_view>

#include "analysis/bench.h"
#include "report/table.h"

namespace strata::report {

struct BenchReportContext {
  size_t runs = 0;     // -n
  size_t warmups = 0;  // --warmup
};

// The decimals a bench quantity prints with, by its unit: counts (page
// faults) are whole; milliseconds, MiB and the program's own metrics get 3.
// `strata compare`'s wall table prints the same quantities the same way.
int bench_decimals(std::string_view unit);

report::Table bench_values_table(const analysis::BenchSummary& summary);
report::Table bench_ratio_table(const analysis::BenchSummary& summary);

// The whole report in the chosen format. Table format adds the header,
// failures and missing metrics as text; CSV and JSON carry the same facts as
// data (JSON: {"values": [...], "ratios": [...], "failures": [...]}).
std::string render_bench(const analysis::BenchSummary& summary, const BenchReportContext& ctx,
                         Format format);

}  // namespace strata::report
