#include "import/cpu/store_profile.h"

#include "analysis/cpu_profile_rows_convert.h"
#include "store/cpu_profile_rows.h"

namespace strata::import {

Status store_profile(store::TraceWriter& writer, const BuiltProfile& built) {
  STRATA_TRY(store::write_cpu_profile(writer, analysis::to_rows(built.profile)));
  STRATA_TRY(writer.add_counter("cpu.unwind_truncated",
                                static_cast<int64_t>(built.counters.unwind_truncated)));
  STRATA_TRY(writer.add_counter("cpu.unwind_max_frames",
                                static_cast<int64_t>(built.counters.unwind_max_frames)));
  return writer.add_counter("cpu.unwind_incomplete",
                            static_cast<int64_t>(built.counters.unwind_incomplete));
}

}  // namespace strata::import
