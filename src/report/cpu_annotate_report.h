// `--annotate FUNC`: the function's source with the time of each line, as
// perf annotate --stdio (with source) and line_profiler show it:
//
//   Annotate: cpu_hotspot_lib.cc:136(normalize_line_slow)  self 0.412 s, total 0.415 s
//      self %  total %   line  source
//        0.0      0.0     136  std::string normalize_line_slow(const std::string& line) {
//       61.2     61.5     139      for (char c : line) {
//
// Percentages are of the function's total time. The source is read from
// the file the debug info names; when it cannot be read, the sampled lines
// are listed without it. CSV and JSON: one row per sampled line.
#pragma once

#include <string>

#include "analysis/cpu_lines.h"
#include "report/table.h"

namespace strata::report {

std::string render_annotation(const analysis::Annotation& a, Format format);

}  // namespace strata::report
