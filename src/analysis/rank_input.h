// One rank's file as the multi-rank analysis takes it (analysis/multi_rank.h).
#pragma once

#include "analysis/multi_rank.h"
#include "store/rank_rows.h"

namespace strata::analysis {

// The rank, launcher, job, boot id and clock pair of `file.row` (all unknown
// when the file has no row), its host and its GPU tables.
RankInput rank_input(store::RankFile file);

}  // namespace strata::analysis
