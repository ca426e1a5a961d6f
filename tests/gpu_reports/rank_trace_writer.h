// Writes one rank's strata trace for the multi-rank tests through the store's
// TraceWriter: run metadata, a strata_ranks row, kernels and memcpy rows.
// Used by tests/gpu_reports/multi_rank_store_test.cc and
// tests/cli/multi_rank_cli_test.cc.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/rank_rows.h"
#include "store/trace_db.h"

namespace strata::testing {

struct SyntheticKernel {
  std::string name;
  int64_t start = 0;
  int64_t end = 0;
  int64_t device = 0;
};

struct SyntheticRank {
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::optional<int64_t> world_size;
  std::string host = "node0";
  std::string boot_id = "0b0b0b0b-boot";
  std::string job_id = "job1";
  // CLOCK_MONOTONIC and CLOCK_REALTIME at one moment; no row at all when unset
  // (a file written before strata_ranks existed).
  bool write_rank_row = true;
  int64_t clock_monotonic_ns = 1'000'000'000;
  int64_t clock_realtime_ns = 1'700'000'000'000'000'000;
  int64_t clock_error_ns = 40;
  std::vector<SyntheticKernel> kernels;
  std::vector<std::pair<int64_t, int64_t>> memcpys;  // (start, end), host to device
};

inline const char* kAllReduceKernel =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// Two ranks (one host unless told), three all-reduces between compute
// kernels; rank 1 sleeps `delay_ns` before the second.
inline std::vector<SyntheticRank> two_ranks_planted_straggler(int64_t delay_ns) {
  constexpr int64_t kMs = 1'000'000;
  const int64_t base = 2'000 * kMs;
  std::vector<SyntheticRank> ranks(2);
  for (int r = 0; r < 2; ++r) {
    auto& s = ranks[r];
    s.rank = r;
    s.local_rank = r;
    s.world_size = 2;
    int64_t t = base;
    s.memcpys.push_back({t - kMs, t - kMs / 2});
    for (int c = 0; c < 3; ++c) {
      s.kernels.push_back({"void gemm_kernel<float>(float const*, float*, int)", t, t + kMs, r});
      t += kMs;
      int64_t arrive = t + (r == 1 ? (c == 1 ? delay_ns : 20'000) : 0);
      int64_t done = t + (c == 1 ? delay_ns : 20'000) + kMs / 2;
      s.kernels.push_back({kAllReduceKernel, arrive, done, r});
      t = done;
    }
  }
  return ranks;
}

inline void write_rank_trace(const std::string& path, const SyntheticRank& s) {
  auto writer = store::TraceWriter::create(path, true);
  if (!writer) throw std::runtime_error(writer.error().message);
  store::RunInfo run;
  run.verb = "trace";
  run.command = {"python", "train.py"};
  run.working_directory = "/tmp";
  run.start_ns = s.clock_realtime_ns;
  run.end_ns = s.clock_realtime_ns + 1'000'000'000;
  run.exit_status = 0;
  run.host = s.host;
  run.tool_version = "test";
  if (!writer->write_run(run)) throw std::runtime_error("write_run");
  if (s.write_rank_row) {
    store::RankRow row;
    row.rank = s.rank;
    row.local_rank = s.local_rank;
    row.world_size = s.world_size;
    row.launcher = s.rank ? "torchrun" : "";
    row.job_id = s.job_id;
    if (s.rank) row.variables = {{"RANK", std::to_string(*s.rank)}};
    row.boot_id = s.boot_id;
    row.clock_monotonic_ns = s.clock_monotonic_ns;
    row.clock_realtime_ns = s.clock_realtime_ns;
    row.clock_error_ns = s.clock_error_ns;
    auto st = store::write_rank_row(*writer, row);
    if (!st) throw std::runtime_error(st.error().message);
  }
  std::vector<store::KernelRow> rows;
  int64_t correlation = 1;
  for (const auto& k : s.kernels) {
    store::KernelRow row;
    row.start = k.start;
    row.end = k.end;
    row.device_id = k.device;
    row.correlation_id = correlation++;
    row.global_pid = int64_t{1000} << 24;
    row.demangled_name = writer->intern(k.name).value();
    row.short_name = row.demangled_name;
    row.mangled_name = row.demangled_name;
    rows.push_back(row);
  }
  if (!writer->write_kernels(rows)) throw std::runtime_error("write_kernels");
  for (const auto& [start, end] : s.memcpys) {
    std::string sql =
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
        "bytes, copyKind) VALUES (" +
        std::to_string(start) + ", " + std::to_string(end) + ", 0, 1, 7, 4096, 1)";
    if (sqlite3_exec(writer->handle(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      throw std::runtime_error(sqlite3_errmsg(writer->handle()));
    }
  }
  if (!writer->commit()) throw std::runtime_error("commit");
}

}  // namespace strata::testing
