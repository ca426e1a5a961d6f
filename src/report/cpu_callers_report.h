// pstats' print_callers and print_callees (`--callers`, `--callees`): for
// each function the table lists (same sort, filter and limit), the
// functions that called it or that it called, with the edge's ncalls,
// tottime and cumtime (analysis/cpu_callers.h says what they count):
//
//   Function                     was called by...
//                                    ncalls  tottime  cumtime
//   prog.py:9(work)              <-       3    0.003    0.005  prog.py:1(<module>)
//                                         1    0.001    0.001  prog.py:4(loop)
//
// Text as pstats prints it, column for column; CSV and JSON: one row per edge.
#pragma once

#include <string>
#include <vector>

#include "analysis/cpu_callers.h"
#include "analysis/cpu_pstats.h"
#include "report/table.h"

namespace strata::report {

enum class CallView { kCallers, kCallees };

std::string render_cpu_calls(const analysis::CpuHeader& header, const analysis::CpuTable& table,
                             const std::vector<analysis::CpuEdge>& edges, CallView view,
                             Format format);

}  // namespace strata::report
