#include "import/cpu/store_profile.h"

#include <utility>

#include "analysis/cpu_profile_rows_convert.h"
#include "store/cpu_profile_rows.h"

namespace strata::import {

Status store_profile(store::TraceWriter& writer, const BuiltProfile& built) {
  STRATA_TRY(store::write_cpu_profile(writer, analysis::to_rows(built.profile)));
  STRATA_TRY(writer.add_counter("cpu.unwind_truncated",
                                static_cast<int64_t>(built.counters.unwind_truncated)));
  if (built.counters.python_whole_of_truncated > 0) {
    STRATA_TRY(writer.add_counter("cpu.unwind_truncated_python_whole",
                                  static_cast<int64_t>(built.counters.python_whole_of_truncated)));
  }
  STRATA_TRY(writer.add_counter("cpu.unwind_max_frames",
                                static_cast<int64_t>(built.counters.unwind_max_frames)));
  STRATA_TRY(writer.add_counter("cpu.unwind_incomplete",
                                static_cast<int64_t>(built.counters.unwind_incomplete)));
  // Python stacks read from memory (CPython 3.8-3.13): only where any was.
  const auto& c = built.counters;
  if (c.python_stacks_merged + c.python_stacks_mismatched + c.python_read_failures == 0) {
    return Ok{};
  }
  for (auto [name, value] : {std::pair{"cpu.python_stacks_merged", c.python_stacks_merged},
                             std::pair{"cpu.python_stacks_mismatched", c.python_stacks_mismatched},
                             std::pair{"cpu.python_read_failures", c.python_read_failures},
                             std::pair{"cpu.python_read_ns", c.python_read_ns},
                             std::pair{"cpu.python_read_delay_ns", c.python_read_delay_ns}}) {
    STRATA_TRY(writer.add_counter(name, static_cast<int64_t>(value)));
  }
  return Ok{};
}

}  // namespace strata::import
