// Renders `strata compare`: the wall-time table with its test, one table per
// layer (base, new, Δ, Δ % per measure, the counts, added/removed rows) and
// the verdict. Table format: titled sections as nsys prints its reports,
// notes under each; CSV: each section's table under a "# KEY" line, notes on
// stderr; JSON: one document, an object keyed by section.
#pragma once

#include <string>
#include <vector>

#include "analysis/compare.h"
#include "report/table.h"

namespace strata::report {

Table compare_wall_table(const analysis::WallComparison& wall);
Table compare_section_table(const analysis::SectionDiff& section);

// One sentence: the verdict and the numbers behind it.
std::string verdict_sentence(const analysis::VerdictResult& verdict);

// The --gate line for stderr: why it failed, or why it could not be checked;
// empty when it passed after a test.
std::string gate_sentence(const analysis::VerdictResult& verdict, const analysis::GateResult& gate,
                          double percent);

struct RenderedComparison {
  std::string out;                 // stdout
  std::vector<std::string> notes;  // for stderr (CSV only: table and JSON carry them)
};

RenderedComparison render_comparison(const analysis::CompareSide& a, const analysis::CompareSide& b,
                                     const analysis::Comparison& comparison, Format format);

}  // namespace strata::report
