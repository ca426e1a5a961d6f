// TraceWriter and choose_output_path (store/trace_db.h).
//
// The file is built under a temporary name (common/atomic_file.h) with
// journaling and syncing off: nothing reads it until commit() renames it into
// place, and a crash before that leaves only the temporary file, never a
// damaged trace under the final name. commit() fsyncs before the rename for
// the same reason. Error messages name the final file, which is what the user
// asked for; the temporary name would mean nothing to them.
#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/atomic_file.h"
#include "common/build_info.h"
#include "common/strings.h"
#include "store/schema.h"
#include "store/sqlite_util.h"
#include "store/trace_db.h"

namespace strata::store {
namespace fs = std::filesystem;

namespace {

// 'STRA': lets file(1) and readers tell strata traces from other SQLite files.
constexpr int kApplicationId = 0x53545241;

bool path_taken(const std::string& path) {
  std::error_code ec;
  // symlink_status: a dangling symlink still occupies the name.
  return fs::symlink_status(path, ec).type() != fs::file_type::not_found;
}

std::string exists_message(const std::string& path) {
  return fmt::format("{} exists; use --force to overwrite", printable(path));
}

// A run without -o: the trace takes the first free "<stem>N.sqlite", N >= first.
struct Numbered {
  std::string stem;
  int first = 1;
};

}  // namespace

Result<std::string> choose_output_path(const std::optional<std::string>& requested, bool force,
                                       const std::string& stem) {
  if (requested) {
    if (requested->empty()) return make_error("empty output file name");
    if (!force && path_taken(*requested)) return make_error(exists_message(*requested));
    return *requested;
  }
  for (int n = 1; n < 1'000'000; ++n) {
    std::string candidate = fmt::format("{}{}.sqlite", stem, n);
    if (!path_taken(candidate)) return candidate;
  }
  return make_error(fmt::format("no free file name {}N.sqlite in the current directory", stem));
}

struct TraceWriter::Impl {
  std::string path;                // the final name (a guess until commit() for numbered names)
  std::string temp_path;           // the file SQLite writes
  std::optional<AtomicFile> file;  // owns temp_path: removes it unless published
  std::optional<Numbered> numbered;
  sqlite3* db = nullptr;
  int64_t next_string_id = 0;
  std::unordered_map<std::string, int64_t> string_ids;
  sql::Statement insert_string;
  sql::Statement insert_kernel;
  sql::Statement insert_kernel_batch;
  sql::Statement insert_kernel_graph;
  sql::Statement add_counter;

  ~Impl() {
    // Statements must be finalized before the connection closes.
    insert_string = {};
    insert_kernel = {};
    insert_kernel_batch = {};
    insert_kernel_graph = {};
    add_counter = {};
    if (db != nullptr) sqlite3_close(db);  // before `file` removes the temporary file
  }

  Status check_open() const {
    if (db == nullptr)
      return make_error(fmt::format("{}: trace already committed", printable(path)));
    return Ok{};
  }
  Status exec(std::string_view text) { return sql::exec(db, text, printable(path)); }
  Result<sql::Statement> prepare(std::string_view text) {
    return sql::Statement::prepare(db, text, printable(path));
  }
  Status step_done(sql::Statement& stmt) {
    int rc = stmt.step();
    stmt.reset();
    if (rc != SQLITE_DONE) return sql::error(db, printable(path));
    return Ok{};
  }
  Status init_schema();
  Status shrink_if_small();
};

Status TraceWriter::Impl::shrink_if_small() {
  // 64 KiB pages make bulk inserts fast but give every table a 64 KiB root
  // page, over 2 MB for a trace with a few rows; small files are rebuilt
  // with 4 KiB pages, which costs milliseconds at that size.
  constexpr int64_t kSmallPages = 128;  // 8 MiB
  int64_t pages = 0;
  {
    STRATA_ASSIGN_OR_RETURN(auto stmt, prepare("PRAGMA page_count"));
    if (stmt.step() != SQLITE_ROW) return sql::error(db, printable(path));
    pages = stmt.column_int(0);
  }
  if (pages > kSmallPages) return Ok{};
  STRATA_TRY(exec("PRAGMA page_size = 4096"));
  return exec("VACUUM");
}

Status TraceWriter::Impl::init_schema() {
  // page_size must precede the first write; with 64 KiB pages bulk kernel
  // inserts take a third less CPU than with the 4 KiB default. A small page
  // cache (2 MiB) holds the right edges of the B-trees being appended to and
  // is 15-20% faster than a large one, which spends its time faulting in
  // fresh memory for pages that are written once anyway.
  for (std::string_view pragma : {"PRAGMA page_size = 65536", "PRAGMA journal_mode = OFF",
                                  "PRAGMA synchronous = OFF", "PRAGMA locking_mode = EXCLUSIVE",
                                  "PRAGMA temp_store = MEMORY", "PRAGMA cache_size = -2048"}) {
    STRATA_TRY(exec(pragma));
  }
  STRATA_TRY(exec(fmt::format("PRAGMA application_id = {}", kApplicationId)));
  STRATA_TRY(exec("BEGIN"));
  for (auto ddl : schema::nsys_tables()) {
    STRATA_TRY(exec(ddl));
  }
  for (auto ddl : schema::strata_tables()) {
    STRATA_TRY(exec(ddl));
  }
  for (auto rows : schema::enum_rows()) {
    STRATA_TRY(exec(rows));
  }
  STRATA_ASSIGN_OR_RETURN(auto meta,
                          prepare("INSERT INTO META_DATA_EXPORT (name, value) VALUES (?, ?)"));
  const std::pair<std::string_view, std::string> rows[] = {
      {"EXPORT_PRODUCT_NAME", "strata"},
      {"EXPORT_PRODUCT_VERSION", build::kVersion},
      {"EXPORT_SCHEMA_VERSION", std::string(schema::kNsysExportSchemaVersion)},
      {"STRATA_SCHEMA_VERSION", std::to_string(kSchemaVersion)},
  };
  for (const auto& [name, value] : rows) {
    meta.bind(1, name);
    meta.bind(2, value);
    STRATA_TRY(step_done(meta));
  }
  STRATA_ASSIGN_OR_RETURN(auto strings, prepare("INSERT INTO StringIds (id, value) VALUES (?, ?)"));
  insert_string = std::move(strings);
  return Ok{};
}

Result<TraceWriter> TraceWriter::create(const std::string& path, bool overwrite) {
  STRATA_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(path, overwrite ? Existing::kReplace
                                                                              : Existing::kRefuse));
  auto impl = std::make_unique<Impl>();
  impl->file.emplace(std::move(file));
  return open_temp(std::move(impl));
}

Result<TraceWriter> TraceWriter::create_numbered(const std::string& stem) {
  // The first free name now is only a guess (and what path() says until
  // commit()): the name is taken when the finished trace is moved into place,
  // so that a SIGKILL leaves nothing under it and parallel runs differ.
  STRATA_ASSIGN_OR_RETURN(std::string guess, choose_output_path(std::nullopt, false, stem));
  int first = std::stoi(guess.substr(stem.size()));
  STRATA_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(guess, Existing::kReplace));
  auto impl = std::make_unique<Impl>();
  impl->file.emplace(std::move(file));
  impl->numbered = Numbered{stem, first};
  return open_temp(std::move(impl));
}

Result<TraceWriter> TraceWriter::open_temp(std::unique_ptr<Impl> impl) {
  impl->path = impl->file->path();
  impl->temp_path = impl->file->temp_path();
  impl->file->close_fd();  // SQLite opens the file by name
  // NOFOLLOW: the temporary name is ours (O_EXCL); never a link put there since.
  int rc =
      sqlite3_open_v2(impl->temp_path.c_str(), &impl->db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    return impl->db ? sql::error(impl->db, printable(impl->path))
                    : sql::error_code(rc, printable(impl->path));
  }
  STRATA_TRY(impl->init_schema());
  return TraceWriter(std::move(impl));
}

TraceWriter::TraceWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceWriter::TraceWriter(TraceWriter&&) noexcept = default;
TraceWriter& TraceWriter::operator=(TraceWriter&&) noexcept = default;
TraceWriter::~TraceWriter() = default;

const std::string& TraceWriter::path() const {
  return impl_->path;
}

sqlite3* TraceWriter::handle() const {
  return impl_->db;
}

Status TraceWriter::write_run(const RunInfo& run) {
  STRATA_TRY(impl_->check_open());
  constexpr const char* kInsertRun =
      "INSERT OR REPLACE INTO strata_run (id, schema_version, verb, command, working_directory, "
      "start_ns, end_ns, exit_status, signal, host, tool_version) "
      "VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  STRATA_ASSIGN_OR_RETURN(auto stmt, impl_->prepare(kInsertRun));
  stmt.bind(1, int64_t{run.schema_version});
  stmt.bind(2, run.verb);
  stmt.bind(3, sql::argv_to_json(run.command));
  stmt.bind(4, run.working_directory);
  stmt.bind(5, run.start_ns);
  stmt.bind(6, run.end_ns);
  stmt.bind(7, run.exit_status ? std::optional<int64_t>(*run.exit_status) : std::nullopt);
  stmt.bind(8, run.signal ? std::optional<int64_t>(*run.signal) : std::nullopt);
  stmt.bind(9, run.host);
  stmt.bind(10, run.tool_version);
  return impl_->step_done(stmt);
}

Status TraceWriter::write_bench_runs(std::span<const BenchRun> runs) {
  STRATA_TRY(impl_->check_open());
  STRATA_ASSIGN_OR_RETURN(
      auto insert_run,
      impl_->prepare(
          "INSERT INTO strata_bench_runs (label, command, iteration, warmup, wall_ns, user_ns, "
          "sys_ns, max_rss_kb, exit_status, signal, minor_faults, major_faults) VALUES (?, ?, ?, "
          "?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  STRATA_ASSIGN_OR_RETURN(
      auto insert_metric,
      impl_->prepare("INSERT INTO strata_bench_metrics (run_id, name, value) VALUES (?, ?, ?)"));
  for (const BenchRun& run : runs) {
    insert_run.bind(1, run.label);
    insert_run.bind(2, sql::argv_to_json(run.command));
    insert_run.bind(3, int64_t{run.iteration});
    insert_run.bind(4, int64_t{run.warmup ? 1 : 0});
    insert_run.bind(5, run.wall_ns);
    insert_run.bind(6, run.user_ns);
    insert_run.bind(7, run.sys_ns);
    insert_run.bind(8, run.max_rss_kb);
    insert_run.bind(9, run.exit_status ? std::optional<int64_t>(*run.exit_status) : std::nullopt);
    insert_run.bind(10, run.signal ? std::optional<int64_t>(*run.signal) : std::nullopt);
    insert_run.bind(11, run.minor_faults);
    insert_run.bind(12, run.major_faults);
    STRATA_TRY(impl_->step_done(insert_run));
    int64_t run_id = sqlite3_last_insert_rowid(impl_->db);
    for (const auto& [name, value] : run.metrics) {
      insert_metric.bind(1, run_id);
      insert_metric.bind(2, name);
      insert_metric.bind(3, value);
      STRATA_TRY(impl_->step_done(insert_metric));
    }
  }
  return Ok{};
}

Result<int64_t> TraceWriter::intern(const std::string& text) {
  STRATA_TRY(impl_->check_open());
  if (auto it = impl_->string_ids.find(text); it != impl_->string_ids.end()) return it->second;
  int64_t id = impl_->next_string_id;
  impl_->insert_string.bind(1, id);
  impl_->insert_string.bind(2, text);
  STRATA_TRY(impl_->step_done(impl_->insert_string));
  impl_->next_string_id = id + 1;
  impl_->string_ids.emplace(text, id);
  return id;
}

namespace {

constexpr std::string_view kKernelInsert =
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
    "correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread, "
    "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
    "localMemoryPerThread, localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId) VALUES ";
constexpr int kKernelColumns = 24;
// Rows per INSERT statement: one sqlite3_step per batch instead of per row
// halves the cost of a bulk insert (bench/store_bulk_insert.cc).
constexpr int kKernelBatch = 64;

std::string kernel_insert_sql(int rows) {
  std::string text(kKernelInsert);
  std::string tuple = "(?";
  for (int c = 1; c < kKernelColumns; ++c) tuple += ",?";
  tuple += ")";
  for (int r = 0; r < rows; ++r) {
    if (r > 0) text += ',';
    text += tuple;
  }
  return text;
}

// Binds kernel rows into a statement of one or more row tuples. Bindings
// survive sqlite3_reset, and most kernel columns repeat from row to row
// (device, context, block shape, ...), so only changed values are rebound:
// binding is a tenth of the insert's cost otherwise.
class KernelBinder {
 public:
  explicit KernelBinder(int rows)
      : bound_(static_cast<size_t>(rows) * kKernelColumns, kUnbound),
        node_null_(static_cast<size_t>(rows), -1) {}

  // Columns in table order; greenContextId, launchType, cacheConfig and
  // sharedMemoryLimitConfig stay NULL: CUPTI reports them, strata's agent
  // does not record them yet.
  void bind(sql::Statement& stmt, int row_in_batch, const KernelRow& row) {
    const int64_t values[] = {row.start,
                              row.end,
                              row.device_id,
                              row.context_id,
                              row.stream_id,
                              row.correlation_id,
                              row.global_pid,
                              row.demangled_name,
                              row.short_name,
                              row.mangled_name,
                              row.registers_per_thread,
                              row.grid_x,
                              row.grid_y,
                              row.grid_z,
                              row.block_x,
                              row.block_y,
                              row.block_z,
                              row.static_shared_memory,
                              row.dynamic_shared_memory,
                              row.local_memory_per_thread,
                              row.local_memory_total,
                              row.grid_id,
                              row.shared_memory_executed};
    static_assert(std::size(values) + 1 == kKernelColumns);
    const int first = row_in_batch * kKernelColumns;
    int64_t* bound = &bound_[static_cast<size_t>(first)];
    for (int c = 0; c < kKernelColumns - 1; ++c) {
      // kUnbound is a valid value too: rebinding it once more is harmless.
      if (bound[c] != values[c] || bound[c] == kUnbound) {
        stmt.bind(first + c + 1, values[c]);
        bound[c] = values[c];
      }
    }
    int& node_null = node_null_[static_cast<size_t>(row_in_batch)];
    const int index = first + kKernelColumns;
    if (row.graph_node_id) {
      if (node_null != 0 || bound[kKernelColumns - 1] != *row.graph_node_id) {
        stmt.bind(index, *row.graph_node_id);
        bound[kKernelColumns - 1] = *row.graph_node_id;
        node_null = 0;
      }
    } else if (node_null != 1) {
      stmt.bind_null(index);
      node_null = 1;
    }
  }

 private:
  static constexpr int64_t kUnbound = INT64_MIN;
  std::vector<int64_t> bound_;
  std::vector<int> node_null_;  // -1 unknown, 0 bound to a value, 1 NULL
};

}  // namespace

Status TraceWriter::write_kernels(std::span<const KernelRow> rows) {
  STRATA_TRY(impl_->check_open());
  Impl& impl = *impl_;
  if (impl.insert_kernel.get() == nullptr) {
    STRATA_ASSIGN_OR_RETURN(auto single, impl.prepare(kernel_insert_sql(1)));
    STRATA_ASSIGN_OR_RETURN(auto batch, impl.prepare(kernel_insert_sql(kKernelBatch)));
    impl.insert_kernel = std::move(single);
    impl.insert_kernel_batch = std::move(batch);
  }
  size_t i = 0;
  KernelBinder batch_binder(kKernelBatch), single_binder(1);
  for (; i + kKernelBatch <= rows.size(); i += kKernelBatch) {
    sql::Statement& stmt = impl.insert_kernel_batch;
    for (int r = 0; r < kKernelBatch; ++r) batch_binder.bind(stmt, r, rows[i + r]);
    int rc = stmt.step();
    sqlite3_reset(stmt.get());
    if (rc != SQLITE_DONE) return sql::error(impl.db, printable(impl.path));
  }
  for (; i < rows.size(); ++i) {
    sql::Statement& stmt = impl.insert_kernel;
    single_binder.bind(stmt, 0, rows[i]);
    int rc = stmt.step();
    sqlite3_reset(stmt.get());
    if (rc != SQLITE_DONE) return sql::error(impl.db, printable(impl.path));
  }
  for (const KernelRow& row : rows) {
    if (!row.graph_id) continue;
    if (impl.insert_kernel_graph.get() == nullptr) {
      STRATA_ASSIGN_OR_RETURN(
          auto graph,
          impl.prepare("INSERT INTO strata_kernel_graphs (global_pid, correlation_id, graph_id) "
                       "VALUES (?, ?, ?)"));
      impl.insert_kernel_graph = std::move(graph);
    }
    sql::Statement& graph = impl.insert_kernel_graph;
    graph.bind(1, row.global_pid);
    graph.bind(2, row.correlation_id);
    graph.bind(3, *row.graph_id);
    STRATA_TRY(impl.step_done(graph));
  }
  return Ok{};
}

Status TraceWriter::add_counter(const std::string& name, int64_t delta) {
  STRATA_TRY(impl_->check_open());
  if (impl_->add_counter.get() == nullptr) {
    STRATA_ASSIGN_OR_RETURN(
        auto stmt,
        impl_->prepare("INSERT INTO strata_counters (name, value) VALUES (?, ?) "
                       "ON CONFLICT (name) DO UPDATE SET value = value + excluded.value"));
    impl_->add_counter = std::move(stmt);
  }
  impl_->add_counter.bind(1, name);
  impl_->add_counter.bind(2, delta);
  return impl_->step_done(impl_->add_counter);
}

Status TraceWriter::commit() {
  STRATA_TRY(impl_->check_open());
  Impl& impl = *impl_;
  STRATA_TRY(impl.exec("COMMIT"));
  STRATA_TRY(impl.shrink_if_small());
  impl.insert_string = {};
  impl.insert_kernel = {};
  impl.insert_kernel_batch = {};
  impl.insert_kernel_graph = {};
  impl.add_counter = {};
  int rc = sqlite3_close(impl.db);
  impl.db = nullptr;
  if (rc != SQLITE_OK) return sql::error_code(rc, printable(impl.path));

  if (impl.numbered) {
    const Numbered& numbered = *impl.numbered;
    STRATA_TRY(impl.file->publish_numbered(
        [&](int n) { return fmt::format("{}{}.sqlite", numbered.stem, n); }, numbered.first));
  } else {
    STRATA_TRY(impl.file->publish());
  }
  impl.path = impl.file->path();
  return Ok{};
}

}  // namespace strata::store
