// Where producers leave their spools: one file per process, named
// PREFIX<pid>[.<n>].bin in a directory the CLI made for the run ("spool-"
// for the CUDA agent, "instrument-" for strata::instrument, "sigprof-" for
// the in-process sampler).
//
// Threading: plain functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::import {

inline constexpr std::string_view kAgentSpoolPrefix = "spool-";
inline constexpr std::string_view kInstrumentSpoolPrefix = "instrument-";
inline constexpr std::string_view kSigprofSpoolPrefix = "sigprof-";

// The regular files (not symlinks) PREFIX*.bin in `dir` (at least one character between
// prefix and suffix), as paths, sorted. An unreadable directory gives none.
std::vector<std::string> list_spools(const std::string& dir, std::string_view prefix);

}  // namespace strata::import
