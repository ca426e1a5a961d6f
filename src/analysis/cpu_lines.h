// Line-level time (`--lines`, `--annotate FUNC`): perf annotate's and
// line_profiler's view, from the line of each sampled frame
// (Frame::sample_line: the sampled instruction's line in the leaf, the
// call's line in its callers), which the line tables (DWARF) give native
// code and the code objects' line tables give Python frames read from a
// CPython 3.8-3.13's memory. Frames only a perf map names have none.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"
#include "common/result.h"

namespace strata::analysis {

// The profile with each frame keyed by the line it was sampled at instead of
// its function's definition line, so the pstats table has one row per line:
// "file:LINE(function)". Frames without a sample line keep their own.
Profile by_sample_line(const Profile& profile);

struct AnnotatedLine {
  int line = 0;
  int64_t self_ns = 0;   // samples whose leaf frame is the function, at this line
  int64_t total_ns = 0;  // samples with the function on the stack, here (its innermost frame)
};

struct Annotation {
  std::string function;
  std::string file;
  int decl_line = 0;
  int64_t self_ns = 0;
  int64_t total_ns = 0;
  int64_t profile_ns = 0;                 // every sample
  std::vector<AnnotatedLine> lines;       // sampled lines, ascending
  std::vector<std::string> also_matched;  // other functions the name matched (fewer samples)
};

// The function whose name contains `name` (the one with the most samples
// when several do), its time per line. An error when none matches or its
// frames carry no lines.
Result<Annotation> annotate(const Profile& profile, const std::string& name);

}  // namespace strata::analysis
