// A built CPU profile into the trace: its rows (strata_cpu_*) and the
// unwinder's counters (cpu.unwind_truncated, cpu.unwind_max_frames, cpu.unwind_incomplete).
#pragma once

#include "common/result.h"
#include "import/cpu/build_profile.h"
#include "store/trace_db.h"

namespace strata::import {

// Writes into the writer's open transaction; the caller commits.
Status store_profile(store::TraceWriter& writer, const BuiltProfile& built);

}  // namespace strata::import
