#include "analysis/rank_input.h"

#include <utility>

namespace strata::analysis {

RankInput rank_input(store::RankFile file) {
  RankInput in;
  in.source = std::move(file.source);
  in.host = std::move(file.host);
  if (file.row) {
    const store::RankRow& row = *file.row;
    in.rank = row.rank;
    in.local_rank = row.local_rank;
    in.world_size = row.world_size;
    in.launcher = row.launcher;
    in.job_id = row.job_id;
    in.boot_id = row.boot_id;
    in.clock = ClockPair{row.clock_monotonic_ns, row.clock_realtime_ns, row.clock_error_ns};
  }
  in.gpu = std::move(file.gpu);
  return in;
}

}  // namespace strata::analysis
