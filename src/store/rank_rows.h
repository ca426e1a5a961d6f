// strata_ranks: which rank of a distributed job a trace is, and the clock
// pair that lines its CLOCK_MONOTONIC timestamps up with other hosts' files
// (docs/formats.md, docs/multi-gpu.md).
//
// Threading: as the TraceWriter/TraceReader passed in (one thread at a time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/gpu_tables.h"
#include "store/trace_db.h"

namespace strata::store {

struct RankRow {
  std::optional<int64_t> global_pid;  // nullopt: the whole profiled command
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::optional<int64_t> world_size;
  std::optional<int64_t> local_world_size;
  std::string launcher;  // torchrun, openmpi, pmi, pmix, slurm; "" when none
  std::string job_id;
  std::vector<std::pair<std::string, std::string>> variables;
  std::string boot_id;  // "" when unknown
  // CLOCK_MONOTONIC and CLOCK_REALTIME read at (nearly) one moment, and the
  // bound on the gap between the two readings.
  int64_t clock_monotonic_ns = 0;
  int64_t clock_realtime_ns = 0;
  int64_t clock_error_ns = 0;
};

Status write_rank_row(TraceWriter& writer, const RankRow& row);

// The file's strata_ranks rows in file order; empty for files written before
// the table existed and for Nsight Systems exports. Malformed variables JSON
// reads as no variables.
Result<std::vector<RankRow>> read_rank_rows(const TraceReader& reader);

// What a multi-rank report reads from one rank's file.
struct RankFile {
  std::string source;          // the file, printable
  std::string host;            // strata_run.host; "" when the run is not recorded
  std::optional<RankRow> row;  // the row that describes the file; nullopt: none
  GpuTables gpu;               // kernels (with device ids and links), memcpys, memsets
};

// Opens `path` and reads its RankFile. A row for the whole command (strata
// ran inside the rank) wins over per-process rows, else the first row. The
// error is one line naming the file.
Result<RankFile> load_rank_file(const std::string& path);

}  // namespace strata::store
