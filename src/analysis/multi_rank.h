// The ranks of one distributed job analysed together, one trace file per rank
// (`strata report a.sqlite b.sqlite ...`): per rank its GPU work by class
// (compute, communication, memory; analysis/kernel_class.h) and its GPU busy
// and idle time; and per NCCL collective which rank arrived last and how long
// the others waited for it. docs/multi-gpu.md gives the definitions.
//
// Pure: the files are read by the caller (store::load_gpu_tables,
// store::read_rank_rows) and come in as RankInput values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/kernel_class.h"
#include "store/gpu_tables.h"

namespace strata::analysis {

// CLOCK_MONOTONIC and CLOCK_REALTIME read at one moment (strata_ranks).
struct ClockPair {
  int64_t monotonic_ns = 0;
  int64_t realtime_ns = 0;
  int64_t error_ns = 0;  // bound on the gap between the two readings
};

struct RankInput {
  std::string source;  // the file, printable
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::optional<int64_t> world_size;
  std::string launcher;
  std::string job_id;
  std::string host;     // strata_run.host
  std::string boot_id;  // equal boot ids share one CLOCK_MONOTONIC; "" when unknown
  std::optional<ClockPair> clock;
  // Kernels with device ids (GpuLoadOptions::kernel_links) and names in
  // `strings`, memcpy and memset rows. Timestamps: CLOCK_MONOTONIC.
  store::GpuTables gpu;
};

// How the files' timestamps were put on one time line.
enum class ClockMethod {
  kOneClock,   // all files from one host (one boot): CLOCK_MONOTONIC as it is
  kWallClock,  // several hosts: each host's CLOCK_MONOTONIC moved onto CLOCK_REALTIME
               // through its clock pair
  kUnaligned,  // several hosts, and some file has no clock pair: timestamps taken as they are
};

struct ClockAlignment {
  ClockMethod method = ClockMethod::kOneClock;
  size_t domains = 1;              // distinct clocks (boot ids, else host names)
  std::vector<int64_t> offset_ns;  // per input: added to its timestamps
  // kWallClock: the part of the cross-host error strata can bound, the sum
  // of the two largest clock-pair sampling errors. It does not cover how far
  // the hosts' CLOCK_REALTIME disagree (NTP: typically 0.1-10 ms, PTP: about
  // 1 us), nor drift between the hosts' clocks during the run: the
  // collectives' end spread below measures what is left.
  int64_t error_bound_ns = 0;
  std::vector<std::string> unaligned_sources;  // kUnaligned: files without a clock pair
};

struct RankSummary {
  size_t input = 0;   // index into the inputs
  std::string label;  // the rank number; "rank (file)" when duplicated; the file when unknown
  std::vector<int64_t> devices;  // deviceId values of its kernels, ascending
  int64_t kernels = 0;
  int64_t compute_kernels = 0;
  int64_t communication_kernels = 0;
  int64_t memory_kernels = 0;
  int64_t memops = 0;  // memcpy + memset rows
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;  // NCCL kernels' durations, waiting included
  int64_t memory_ns = 0;         // memory kernels + memcpy + memset
  int64_t busy_ns = 0;           // union of all kernel, memcpy and memset intervals
  int64_t span_start_ns = 0;     // aligned: first GPU activity ...
  int64_t span_end_ns = 0;       // ... to the end of the last
  int64_t span_ns = 0;
  int64_t idle_ns = 0;  // span - busy
  // Collectives (matched across ranks):
  int64_t wait_ns = 0;  // time it waited in collectives for the last rank
  int64_t max_wait_ns = 0;
  int64_t times_last = 0;       // collectives it arrived last at (with a delay > 0)
  int64_t delay_caused_ns = 0;  // the delays of those collectives, summed
  int64_t max_delay_ns = 0;
};

// One collective: the k-th kernel of its type on every rank.
struct CollectiveInstance {
  Collective type = Collective::kNone;
  int64_t index = 0;              // 0-based among its type
  std::vector<size_t> ranks;      // indices into MultiRankResult::ranks taking part
  std::vector<int64_t> start_ns;  // aligned, per entry of `ranks`
  std::vector<int64_t> end_ns;    // aligned
  size_t last = 0;                // index into MultiRankResult::ranks: latest start
  size_t first = 0;               // earliest start
  int64_t delay_ns = 0;           // latest start - earliest start
  int64_t mean_wait_ns = 0;       // over the ranks other than the last
  int64_t end_spread_ns = 0;      // latest end - earliest end: near 0 when clocks agree
};

struct MultiRankResult {
  std::vector<RankSummary> ranks;  // by rank number, files without one last in input order
  std::vector<CollectiveInstance> collectives;  // by earliest start
  ClockAlignment clock;
  int64_t origin_ns = 0;        // aligned time of the earliest GPU activity of any rank
  std::optional<size_t> worst;  // the rank with the largest delay caused, if any was late
  int64_t total_wait_ns = 0;
  int64_t max_wait_ns = 0;
  int64_t end_spread_median_ns = 0;  // over the collectives
  int64_t end_spread_max_ns = 0;
  // Duplicated ranks, files without rank, differing world sizes, missing
  // ranks, collective counts that differ between ranks, several jobs.
  std::vector<std::string> warnings;
};

MultiRankResult analyze_ranks(std::span<const RankInput> inputs);

}  // namespace strata::analysis
