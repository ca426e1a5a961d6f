// A profile as the file `python -m cProfile -o out.prof` writes, so that
// `python -m pstats out.prof`, pstats.Stats, snakeviz and tuna open it:
// CPython's marshal serialization of pstats' stats dict,
//   {(file, line, function): (primitive calls, calls, tottime, cumtime,
//                             {caller key: (calls, primitive calls, tottime, cumtime)})}
// with times in seconds. Rows and edges are the pstats report's
// (analysis/cpu_pstats.h, analysis/cpu_callers.h): in sampled profiles the
// call counts are samples with the function as leaf.
//
// A function with no source file is keyed by its module (file "libc.so.6",
// line 0), one with neither by pstats' built-in form ("~", 0, "<name>"), so
// that pstats labels every function as the report does; names that are not valid UTF-8 get
// U+FFFD for each bad byte, since marshal's strings are UTF-8.
#pragma once

#include <string>

#include "analysis/cpu_profile.h"

namespace strata::exporter {

std::string pstats_file(const analysis::Profile& profile);

}  // namespace strata::exporter
