// The CPU table's sort keys, as pstats names them (Stats.sort_stats): every
// key pstats accepts, with its aliases, its unique prefixes and the legacy
// integers, several at once ("cumulative,name" sorts by cumulative time,
// then function name), and strata's own "samples".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace strata::analysis {

// Each is one of pstats' sort fields; ncalls counts all calls, pcalls the
// primitive (non-recursive) ones, equal in sampled modes.
enum class CpuSort {
  kNcalls,   // calls, ncalls
  kPcalls,   // pcalls
  kTottime,  // time, tottime
  kCumtime,  // cumulative, cumtime
  kFile,     // filename, module
  kLine,     // line
  kName,     // name
  kNfl,      // nfl: name, then file, then line
  kStdname,  // stdname: the "file:line(function)" label
  kSamples,  // strata: samples the function appears in (ncalls when instrumented)
};

using CpuSortKeys = std::vector<CpuSort>;

// A comma-separated list of keys. A word names a key when it is one of the
// key names above, a prefix that only one meaning shares (pstats' rule:
// "cum" is cumulative time, "c" is refused as calls or cumulative), or
// pstats' legacy -1 (stdname), 0 (calls), 1 (time) or 2 (cumulative).
Result<CpuSortKeys> parse_cpu_sort(std::string_view list);

// pstats' "Ordered by:" wording, keys joined by ", ": "cumulative time, function name".
std::string sort_description(const CpuSortKeys& keys);

// The accepted key names, for help and error text.
std::string_view cpu_sort_key_names();

}  // namespace strata::analysis
