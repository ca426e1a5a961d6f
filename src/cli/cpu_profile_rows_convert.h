// Forwarding header, kept only until cli/export.cc and cli/report.cc include
// analysis/cpu_profile_rows_convert.h (and call analysis::from_rows) instead.
#pragma once

#include "analysis/cpu_profile_rows_convert.h"

namespace strata::cli {

using analysis::from_rows;
using analysis::to_rows;

}  // namespace strata::cli
