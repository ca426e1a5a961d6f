// Tables of the multi-rank analysis (analysis/multi_rank.h) for
// `strata report a.sqlite b.sqlite ...`, rendered like the GPU summaries
// (title line, table, notes; CSV and JSON carry the table alone and the
// caller prints the notes to stderr):
//   rank_sum        one row per rank: kernels, compute / communication /
//                   memory time, GPU busy and idle, time waited in collectives
//   collective_sum  one row per matched NCCL collective, longest delay first:
//                   which rank arrived last, by how much, the others' wait
//   straggler_sum   one row per rank: how often it was last, the delay it
//                   caused, how long it waited; notes name the worst straggler
// The clock alignment is a note of rank_sum; the analysis's warnings are the
// caller's to print (to stderr, as every tool message).
// docs/multi-gpu.md describes every column.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "analysis/multi_rank.h"
#include "report/gpu_reports.h"

namespace strata::report {

GpuReport rank_sum_report(const analysis::MultiRankResult& result,
                          std::span<const analysis::RankInput> inputs);
// `limit`: rows kept after sorting by delay; 0 keeps all.
GpuReport collective_sum_report(const analysis::MultiRankResult& result, size_t limit);
GpuReport straggler_sum_report(const analysis::MultiRankResult& result);

// The clock alignment in one line, e.g. "Clocks: one host, one CLOCK_MONOTONIC".
std::string clock_note(const analysis::MultiRankResult& result);

}  // namespace strata::report
