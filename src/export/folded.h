// Folded stacks ("root;...;leaf count" per line), the input of FlameGraph,
// inferno, speedscope and Firefox Profiler. Lines are sorted bytewise and
// equal stacks merged, so the output is deterministic. Names are sanitized
// because ';' separates frames and a line break ends the record: ';' becomes
// ':', CR/LF/tab and other control bytes become ' ' (the readers split the
// count off at the last space, so spaces inside names are safe). An empty
// stack counts as "[unknown]", perf's name, to keep the totals.
#pragma once

#include <string>
#include <string_view>

#include "analysis/cpu_profile.h"
#include "analysis/cpu_tree.h"

namespace strata::exporter {

// weight: samples (default) or sample periods in ns; instrumented profiles
// always count self nanoseconds. thread_roots prefixes "name (tid N)".
using FoldedOptions = analysis::CallTreeOptions;

std::string folded_stacks(const analysis::Profile& profile, const FoldedOptions& options);

// One frame name made safe for a folded line.
std::string folded_name(std::string_view name);

}  // namespace strata::exporter
