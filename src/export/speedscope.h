// speedscope JSON (https://www.speedscope.app/file-format-schema.json), which
// speedscope, and through it Firefox Profiler imports, open directly.
// shared.frames are functions (analysis/cpu_profile.h), not addresses, so a
// function's samples merge in the viewer. One profile per thread, by tid:
// - sampled modes: type "sampled", unit "nanoseconds", samples root first,
//   weights = sample periods; startValue 0 and endValue = the sum of the
//   weights, because speedscope sizes a sampled profile as endValue -
//   startValue;
// - instrumented mode: type "evented", O/C events made properly nested by
//   balance_events, times relative to the profile's first event so threads
//   line up.
// activeProfileIndex is the heaviest thread. Pure: returns the document.
#pragma once

#include <string>

#include "analysis/cpu_profile.h"

namespace strata::exporter {

struct SpeedscopeOptions {
  std::string name = "strata cpu profile";  // the document's name (file title in the viewer)
  std::string exporter = "strata";          // e.g. "strata 0.1.0"
};

std::string speedscope_json(const analysis::Profile& profile, const SpeedscopeOptions& options);

}  // namespace strata::exporter
