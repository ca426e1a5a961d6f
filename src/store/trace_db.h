// The trace database: one SQLite file per run (shared/DESIGN.md, Trace
// database). CUDA data uses Nsight Systems' export tables and column names;
// everything else lives in strata_* tables. Schema v1 is described in
// docs/formats.md.
//
// Threading: a TraceWriter or TraceReader is used from one thread at a time.
// Ownership: each owns its sqlite3 handle and closes it on destruction.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

struct sqlite3;

namespace strata::store {

inline constexpr int kSchemaVersion = 2;

// What a run was: one row of strata_run.
struct RunInfo {
  std::string verb;                  // "bench", "cpu", "trace", ...
  std::vector<std::string> command;  // argv of the profiled command (A for bench)
  std::string working_directory;
  int64_t start_ns = 0;  // CLOCK_REALTIME, ns since the epoch
  int64_t end_ns = 0;
  std::optional<int> exit_status;  // set when the target exited
  std::optional<int> signal;       // set when the target was killed
  std::string host;
  std::string tool_version;
  int schema_version = kSchemaVersion;
};

// One execution of a command under `strata bench`: one row of
// strata_bench_runs, plus its KEY=VALUE metrics in strata_bench_metrics.
struct BenchRun {
  std::string label;                 // "A" or "B"
  std::vector<std::string> command;  // argv
  int iteration = 0;                 // 0-based, warm-ups and measured runs counted separately
  bool warmup = false;
  int64_t wall_ns = 0;
  int64_t user_ns = 0;
  int64_t sys_ns = 0;
  int64_t max_rss_kb = 0;
  // Page faults (wait4's ru_minflt, ru_majflt); nullopt in a trace written
  // before strata recorded them.
  std::optional<int64_t> minor_faults;
  std::optional<int64_t> major_faults;
  std::optional<int> exit_status;
  std::optional<int> signal;
  std::vector<std::pair<std::string, double>> metrics;
};

// The columns nsys's GPU activity tables (KERNEL, MEMCPY, MEMSET,
// SYNCHRONIZATION) begin with, in their order (less greenContextId, which
// strata leaves NULL): each row type below and in import/cuda_rows.h has them.
struct GpuActivityColumns {
  int64_t start = 0;
  int64_t end = 0;
  int64_t device_id = 0;
  int64_t context_id = 0;
  int64_t stream_id = 0;
  int64_t correlation_id = 0;
  int64_t global_pid = 0;
};

// A row of CUPTI_ACTIVITY_KIND_KERNEL with the columns strata fills; names
// are ids into StringIds (see TraceWriter::intern).
struct KernelRow : GpuActivityColumns {
  int64_t demangled_name = 0;
  int64_t short_name = 0;
  int64_t mangled_name = 0;
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  int64_t block_x = 1, block_y = 1, block_z = 1;
  int64_t registers_per_thread = 0;
  int64_t static_shared_memory = 0;
  int64_t dynamic_shared_memory = 0;
  int64_t shared_memory_executed = 0;
  int64_t local_memory_per_thread = 0;
  int64_t local_memory_total = 0;
  int64_t grid_id = 0;  // CUPTI's gridId; 0 where the source has none
  std::optional<int64_t> graph_node_id;
  std::optional<int64_t> graph_id;  // kept in strata_kernel_graphs: nsys has no such column
};

// Picks the output file of a run. With `requested` set: that path, refused
// when it exists unless `force`. Without: "<stem>N.sqlite" in the current
// directory with the smallest N >= 1 not taken (as nsys names report1, ...).
Result<std::string> choose_output_path(const std::optional<std::string>& requested, bool force,
                                       const std::string& stem);

class TraceWriter {
 public:
  // Creates an empty schema-v1 trace at `path`. The file is written under a
  // temporary name beside `path` and renamed onto it by commit(), so a failed
  // or interrupted run never leaves a half-written trace under its final name
  // and never clobbers an existing file unless `overwrite`.
  // `path` is checked at once (common/atomic_file.h: a directory, a missing or
  // unwritable directory, an existing file without `overwrite`), so a verb
  // fails before it runs anything.
  static Result<TraceWriter> create(const std::string& path, bool overwrite);
  // For a run without -o: the trace becomes "<stem>N.sqlite" with the first N
  // free when commit() moves it into place (nsys's report1, report2, ...).
  // Choosing and taking the name is one atomic step there, so parallel runs
  // get distinct files and a killed run leaves no placeholder behind. path()
  // is the first free name at create() until commit(), the name taken after.
  static Result<TraceWriter> create_numbered(const std::string& stem);

  TraceWriter(TraceWriter&&) noexcept;
  TraceWriter& operator=(TraceWriter&&) noexcept;
  ~TraceWriter();  // without commit(): removes the temporary file

  Status write_run(const RunInfo& run);
  Status write_bench_runs(std::span<const BenchRun> runs);

  // Returns the StringIds id of `text`, adding it once.
  Result<int64_t> intern(const std::string& text);
  Status write_kernels(std::span<const KernelRow> rows);

  // Adds `delta` to the strata_counters row `name` (created at 0), so that
  // survivable bad input (dropped records, bad chunks) is counted in the file.
  Status add_counter(const std::string& name, int64_t delta);

  // Commits the transaction and moves the file to its final name; on error
  // the temporary file is gone and the final name untouched.
  Status commit();

  const std::string& path() const;
  // For the store's table writers (cpu_profile_rows.cc): the open connection,
  // inside the writer's transaction.
  sqlite3* handle() const;

 private:
  struct Impl;
  explicit TraceWriter(std::unique_ptr<Impl> impl);
  static Result<TraceWriter> open_temp(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

enum class TraceKind { kStrata, kNsysExport };

struct TableCount {
  std::string name;
  int64_t rows = 0;
};

class TraceReader {
 public:
  // Opens a trace read-only and checks it: the file must exist, be a whole
  // SQLite database (not truncated), and be a strata trace of a schema
  // version this build reads, or an Nsight Systems export. Each failure is a
  // one-line error naming the file and the problem.
  static Result<TraceReader> open(const std::string& path);

  TraceReader(TraceReader&&) noexcept;
  TraceReader& operator=(TraceReader&&) noexcept;
  ~TraceReader();

  TraceKind kind() const;
  // strata's schema version, or for an nsys export its EXPORT_SCHEMA_VERSION text.
  std::string schema_version() const;
  std::optional<RunInfo> run() const;  // strata traces only
  Result<std::vector<TableCount>> tables() const;
  Result<std::vector<BenchRun>> bench_runs() const;
  Result<std::vector<KernelRow>> kernels() const;
  Result<std::vector<std::pair<std::string, int64_t>>> counters() const;
  // META_DATA_EXPORT's (name, value) rows, in file order.
  Result<std::vector<std::pair<std::string, std::string>>> export_metadata() const;

  const std::string& path() const;
  sqlite3* handle() const;  // for analyses that read columns directly

 private:
  struct Impl;
  explicit TraceReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::store
