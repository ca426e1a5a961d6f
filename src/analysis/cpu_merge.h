// Several CPU profiles as one, the way pstats.Stats(a, b) adds profiles:
// `strata report a.sqlite b.sqlite` on `strata cpu` traces. Frames are
// re-interned, samples and call events appended, times and counters added.
#pragma once

#include <vector>

#include "analysis/cpu_profile.h"
#include "common/result.h"

namespace strata::analysis {

// Errors: no profiles, or sampled and instrumented profiles together
// (samples and exact call counts cannot be added). Profiles sampled at
// different rates merge: each sample keeps the period it stood for, and the
// merged rate is the first profile's.
Result<Profile> merge_profiles(std::vector<Profile> profiles);

}  // namespace strata::analysis
