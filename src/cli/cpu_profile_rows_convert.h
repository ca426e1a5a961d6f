// Converts between the analysis's Profile and the store's CPU rows, so the
// profile `strata cpu` prints is the one `strata report` reads back.
#pragma once

#include "analysis/cpu_profile.h"
#include "store/cpu_profile_rows.h"

namespace strata::cli {

store::CpuProfileRows to_rows(const analysis::Profile& profile);
analysis::Profile from_rows(const store::CpuProfileRows& rows);

}  // namespace strata::cli
