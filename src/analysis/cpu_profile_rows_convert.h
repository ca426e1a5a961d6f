// Converts between the analysis's Profile and the store's CPU rows, so the
// profile `strata cpu` prints is the one `strata report` reads back. The
// store knows nothing of the analysis types; this is where they meet.
// Pure functions: from_rows(to_rows(p)) gives back p's frames, samples (with
// their weights resolved, see sample_weight_ns), calls, threads and processes.
#pragma once

#include "analysis/cpu_profile.h"
#include "store/cpu_profile_rows.h"

namespace strata::analysis {

store::CpuProfileRows to_rows(const Profile& profile);
Profile from_rows(const store::CpuProfileRows& rows);

}  // namespace strata::analysis
