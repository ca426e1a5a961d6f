// Ingest: the agent's spools (docs/agent.md, docs/spool-format.md) into the
// trace database's Nsight Systems tables, so strata's reports, `nsys stats`
// and users' SQL read them like an nsys export.
//
// Each spool is read once through the one chunk loop (chunk_visitor.h): its
// strings, thread names, process info and drop counters are collected and its
// CUPTI buffers walked after the whole file, so a record whose strings chunk
// came later (a crash handler's emit-all, or damage that moved a chunk) still
// gets its name. Records are written as they are walked; correlation
// (launch <-> kernel) is left to the reports, which join on correlationId.
//
// Damage is never an error: every problem is a strata_counters row (spool.*,
// ingest.*, agent.*) and an IngestStats field. A spool whose header cannot be
// read is skipped with one line in IngestStats::problems.
//
// Threading: one thread, the writer's. Allocation: per-spool string tables and
// batches of rows; memory grows with the number of distinct strings and open
// NVTX ranges, not with the number of records.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/trace_db.h"

namespace strata::import {

struct IngestStats {
  uint64_t spools = 0;             // spools read (header valid)
  uint64_t unreadable_spools = 0;  // header missing or corrupt: skipped
  uint64_t records = 0;            // CUPTI records walked
  uint64_t runtime_calls = 0;
  uint64_t driver_calls = 0;
  uint64_t kernels = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t syncs = 0;
  uint64_t nvtx_events = 0;  // NVTX_EVENTS rows (ranges, marks, domains)
  uint64_t devices = 0;
  uint64_t external_correlations = 0;  // strata_external_correlation rows (PyTorch ops' ids)
  uint64_t profiled_launches = 0;      // kernel-metrics chunks (strata kernels)
  uint64_t kernel_names_seen = 0;      // strata_kernels_seen rows, over all spools
  uint64_t damaged_chunks = 0;         // crc failures + resyncs
  uint64_t truncated_bytes = 0;        // incomplete last chunks
  uint64_t unknown_chunk_kinds = 0;
  uint64_t unknown_records = 0;       // buffers whose walk stopped at an unknown record kind
  uint64_t unresolved_strings = 0;    // string ids no strings chunk defined
  uint64_t unknown_cbids = 0;         // API calls the build's CUPTI headers do not name
  uint64_t crashed_processes = 0;     // spools without an end marker or closed by a fatal signal
  uint64_t agent_dropped = 0;         // sum of the agent's drop counters
  std::vector<std::string> problems;  // one line per skipped spool
};

// Ingests every spool into `writer` (in its open transaction). Errors only
// when the trace cannot be written.
Result<IngestStats> ingest_spools(const std::vector<std::string>& spool_paths,
                                  store::TraceWriter& writer);

}  // namespace strata::import
