// TraceReader (store/trace_db.h): opens untrusted SQLite files.
//
// Every check turns a bad file into a one-line Error naming the file; none
// may crash. The file is opened through an immutable read-only URI so that
// SQLite never writes to it, not even to roll back a hot journal left beside
// it, and the header is checked by hand first because SQLite reads a
// truncated file as far as it goes without complaint.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/strings.h"
#include "store/sqlite_util.h"
#include "store/trace_db.h"

namespace strata::store {

namespace {

constexpr size_t kHeaderSize = 100;
constexpr char kSqliteMagic[] = "SQLite format 3";  // 16 bytes with the NUL

uint32_t read_be(const unsigned char* p, int bytes) {
  uint32_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | p[i];
  return value;
}

// Checks what the SQLite file header promises against the file itself
// (https://www.sqlite.org/fileformat.html, "The Database Header").
Status check_header(const std::string& path, const std::string& name) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return make_error(fmt::format("{}: no such file", name));
    return make_error(fmt::format("{}: {}", name, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) return make_error(fmt::format("{}: is a directory", name));
  if (!S_ISREG(st.st_mode)) return make_error(fmt::format("{}: not a regular file", name));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(fmt::format("{}: {}", name, std::strerror(errno)));
  std::array<unsigned char, kHeaderSize> header{};
  ssize_t got = ::pread(fd, header.data(), header.size(), 0);
  ::close(fd);
  if (got < 0) return make_error(fmt::format("{}: {}", name, std::strerror(errno)));
  if (got == 0) return make_error(fmt::format("{}: empty file, not an SQLite database", name));
  if (static_cast<size_t>(got) < sizeof kSqliteMagic ||
      std::memcmp(header.data(), kSqliteMagic, sizeof kSqliteMagic) != 0) {
    return make_error(fmt::format("{}: not an SQLite database", name));
  }
  if (static_cast<size_t>(got) < kHeaderSize) {
    return make_error(fmt::format("{}: truncated SQLite database ({} bytes)", name, got));
  }
  uint32_t page_size = read_be(&header[16], 2);
  if (page_size == 1) page_size = 65536;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0) {
    return make_error(fmt::format("{}: corrupt SQLite header (page size {})", name, page_size));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < page_size) {
    return make_error(fmt::format("{}: truncated SQLite database ({} bytes, page size {})", name,
                                  size, page_size));
  }
  // The page count in the header is trusted by SQLite only when the
  // "version-valid-for" number matches the change counter.
  uint32_t change_counter = read_be(&header[24], 4);
  uint32_t page_count = read_be(&header[28], 4);
  uint32_t valid_for = read_be(&header[92], 4);
  if (page_count != 0 && valid_for == change_counter) {
    uint64_t expected = uint64_t{page_count} * page_size;
    if (expected > size) {
      return make_error(
          fmt::format("{}: truncated SQLite database ({} of {} bytes)", name, size, expected));
    }
  } else if (size % page_size != 0) {
    return make_error(fmt::format("{}: truncated SQLite database ({} bytes, page size {})", name,
                                  size, page_size));
  }
  return Ok{};
}

// An SQLite URI for `path` that opens it read-only and immutable.
std::string readonly_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-_.~", c) != nullptr) {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  uri += "?mode=ro&immutable=1";
  return uri;
}

// A read failure as every verb prints it (sql::error names corruption).
Error read_error(sqlite3* db, const std::string& name) {
  return sql::error(db, name);
}

}  // namespace

struct TraceReader::Impl {
  std::string path;
  std::string name;  // path made printable, for messages
  sqlite3* db = nullptr;
  TraceKind kind = TraceKind::kStrata;
  std::string schema_version;
  std::optional<RunInfo> run;
  std::set<std::string> table_names;

  ~Impl() {
    if (db != nullptr) sqlite3_close(db);
  }

  Result<sql::Statement> prepare(std::string_view text) const {
    auto prepared = sql::Statement::prepare(db, text, name);
    if (!prepared) return read_error(db, name);
    return std::move(*prepared);
  }
  bool has(const std::string& table) const { return table_names.count(table) != 0; }
  // Runs `text` and hands each row to `row`; a failed read names the file.
  template <class Row>
  Status for_each_row(std::string_view text, Row&& row) const {
    STRATA_ASSIGN_OR_RETURN(auto stmt, prepare(text));
    int rc;
    while ((rc = stmt.step()) == SQLITE_ROW) row(stmt);
    if (rc != SQLITE_DONE) return read_error(db, name);
    return Ok{};
  }

  Status load_table_names();
  Status load_strata();
  Result<std::optional<std::string>> export_value(std::string_view key) const;
};

Status TraceReader::Impl::load_table_names() {
  return for_each_row("SELECT name FROM sqlite_master WHERE type = 'table'",
                      [&](sql::Statement& row) { table_names.insert(row.column_text(0)); });
}

Result<std::optional<std::string>> TraceReader::Impl::export_value(std::string_view key) const {
  if (!has("META_DATA_EXPORT")) return std::optional<std::string>();
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          prepare("SELECT value FROM META_DATA_EXPORT WHERE name = ? LIMIT 1"));
  stmt.bind(1, key);
  int rc = stmt.step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(stmt.column_text(0));
  if (rc != SQLITE_DONE) return read_error(db, name);
  return std::optional<std::string>();
}

Status TraceReader::Impl::load_strata() {
  // The version is in strata_run once a run is written and in
  // META_DATA_EXPORT from creation on; strata_run wins.
  std::optional<int64_t> version;
  std::optional<RunInfo> info;
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      prepare(
          "SELECT schema_version, verb, command, working_directory, start_ns, end_ns, exit_status, "
          "signal, host, tool_version FROM strata_run LIMIT 1"));
  int rc = stmt.step();
  if (rc == SQLITE_ROW) {
    version = stmt.column_int(0);
    RunInfo r;
    r.verb = stmt.column_text(1);
    auto argv = sql::argv_from_json(stmt.column_text(2));
    if (!argv) {
      return make_error(fmt::format("{}: strata_run.command is not a JSON array of strings", name));
    }
    r.command = std::move(*argv);
    r.working_directory = stmt.column_text(3);
    r.start_ns = stmt.column_int(4);
    r.end_ns = stmt.column_int(5);
    if (auto v = stmt.column_optional_int(6)) r.exit_status = static_cast<int>(*v);
    if (auto v = stmt.column_optional_int(7)) r.signal = static_cast<int>(*v);
    r.host = stmt.column_text(8);
    r.tool_version = stmt.column_text(9);
    info = std::move(r);
  } else if (rc != SQLITE_DONE) {
    return read_error(db, name);
  } else {
    STRATA_ASSIGN_OR_RETURN(auto text, export_value("STRATA_SCHEMA_VERSION"));
    if (text) {
      auto parsed = parse_int(*text);
      if (!parsed) {
        return make_error(
            fmt::format("{}: strata schema version '{}' is not a number", name, printable(*text)));
      }
      version = *parsed;
    }
  }
  if (!version) return make_error(fmt::format("{}: strata trace without a schema version", name));
  if (*version > kSchemaVersion) {
    return make_error(
        fmt::format("{}: strata schema version {} is newer than this strata reads ({})", name,
                    *version, kSchemaVersion));
  }
  if (*version < 1) {
    return make_error(fmt::format("{}: unknown strata schema version {}", name, *version));
  }
  schema_version = std::to_string(*version);
  if (info) info->schema_version = static_cast<int>(*version);
  run = std::move(info);
  return Ok{};
}

Result<TraceReader> TraceReader::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->name = printable(path);
  STRATA_TRY(check_header(path, impl->name));

  int rc = sqlite3_open_v2(readonly_uri(path).c_str(), &impl->db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    if (impl->db == nullptr) return sql::error_code(rc, impl->name);
    return read_error(impl->db, impl->name);
  }
  // A hostile schema must not run SQL functions or views behind our back,
  // and damaged cells should be caught before they are used.
  sqlite3_db_config(impl->db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(impl->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_exec(impl->db, "PRAGMA cell_size_check = ON", nullptr, nullptr, nullptr);

  STRATA_TRY(impl->load_table_names());
  bool strata = impl->has("strata_run");
  bool nsys = impl->has("META_DATA_EXPORT");
  for (const auto& table : impl->table_names) {
    if (table.rfind("CUPTI_ACTIVITY_KIND_", 0) == 0) nsys = true;
  }
  if (strata) {
    impl->kind = TraceKind::kStrata;
    STRATA_TRY(impl->load_strata());
  } else if (nsys) {
    impl->kind = TraceKind::kNsysExport;
    STRATA_ASSIGN_OR_RETURN(auto version, impl->export_value("EXPORT_SCHEMA_VERSION"));
    impl->schema_version = version ? printable(*version) : "unknown";
  } else {
    return make_error(fmt::format("{}: not a strata trace or Nsight Systems export", impl->name));
  }
  return TraceReader(std::move(impl));
}

TraceReader::TraceReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

TraceKind TraceReader::kind() const {
  return impl_->kind;
}
std::string TraceReader::schema_version() const {
  return impl_->schema_version;
}
std::optional<RunInfo> TraceReader::run() const {
  return impl_->run;
}
const std::string& TraceReader::path() const {
  return impl_->path;
}
sqlite3* TraceReader::handle() const {
  return impl_->db;
}

Result<std::vector<TableCount>> TraceReader::tables() const {
  std::vector<TableCount> out;
  for (const auto& table : impl_->table_names) {
    if (table.rfind("sqlite_", 0) == 0) continue;
    STRATA_ASSIGN_OR_RETURN(auto stmt,
                            impl_->prepare("SELECT count(*) FROM " + sql::quote_identifier(table)));
    int rc = stmt.step();
    if (rc != SQLITE_ROW) return read_error(impl_->db, impl_->name);
    out.push_back({table, stmt.column_int(0)});
  }
  return out;
}

Result<std::vector<BenchRun>> TraceReader::bench_runs() const {
  std::vector<BenchRun> out;
  if (!impl_->has("strata_bench_runs")) return out;
  // Page faults came later within schema v2: an older trace has no such columns.
  STRATA_ASSIGN_OR_RETURN(bool has_faults, sql::column_exists(impl_->db, "strata_bench_runs",
                                                              "minor_faults", impl_->name));
  STRATA_ASSIGN_OR_RETURN(
      auto runs,
      impl_->prepare(std::string("SELECT id, label, command, iteration, warmup, wall_ns, user_ns, "
                                 "sys_ns, max_rss_kb, exit_status, signal, ") +
                     (has_faults ? "minor_faults, major_faults" : "NULL, NULL") +
                     " FROM strata_bench_runs ORDER BY id"));
  std::optional<sql::Statement> metrics;
  if (impl_->has("strata_bench_metrics")) {
    STRATA_ASSIGN_OR_RETURN(
        auto stmt,
        impl_->prepare(
            "SELECT name, value FROM strata_bench_metrics WHERE run_id = ? ORDER BY rowid"));
    metrics = std::move(stmt);
  }
  int rc;
  while ((rc = runs.step()) == SQLITE_ROW) {
    BenchRun run;
    int64_t id = runs.column_int(0);
    run.label = runs.column_text(1);
    auto argv = sql::argv_from_json(runs.column_text(2));
    if (!argv) {
      return make_error(fmt::format("{}: strata_bench_runs row {}: command is not a JSON array",
                                    impl_->name, id));
    }
    run.command = std::move(*argv);
    run.iteration = static_cast<int>(runs.column_int(3));
    run.warmup = runs.column_int(4) != 0;
    run.wall_ns = runs.column_int(5);
    run.user_ns = runs.column_int(6);
    run.sys_ns = runs.column_int(7);
    run.max_rss_kb = runs.column_int(8);
    if (auto v = runs.column_optional_int(9)) run.exit_status = static_cast<int>(*v);
    if (auto v = runs.column_optional_int(10)) run.signal = static_cast<int>(*v);
    run.minor_faults = runs.column_optional_int(11);
    run.major_faults = runs.column_optional_int(12);
    if (metrics) {
      metrics->bind(1, id);
      int mrc;
      while ((mrc = metrics->step()) == SQLITE_ROW) {
        run.metrics.emplace_back(metrics->column_text(0), metrics->column_double(1));
      }
      if (mrc != SQLITE_DONE) return read_error(impl_->db, impl_->name);
      metrics->reset();
    }
    out.push_back(std::move(run));
  }
  if (rc != SQLITE_DONE) return read_error(impl_->db, impl_->name);
  return out;
}

Result<std::vector<KernelRow>> TraceReader::kernels() const {
  std::vector<KernelRow> out;
  if (!impl_->has("CUPTI_ACTIVITY_KIND_KERNEL")) return out;
  bool graphs = impl_->has("strata_kernel_graphs");
  std::string text =
      "SELECT k.start, k.end, k.deviceId, k.contextId, k.streamId, k.correlationId, k.globalPid, "
      "k.demangledName, k.shortName, k.mangledName, k.gridX, k.gridY, k.gridZ, k.blockX, "
      "k.blockY, k.blockZ, k.registersPerThread, k.staticSharedMemory, k.dynamicSharedMemory, "
      "k.sharedMemoryExecuted, k.localMemoryPerThread, k.localMemoryTotal, k.gridId, "
      "k.graphNodeId, ";
  text += graphs ? "g.graph_id FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                   "LEFT JOIN strata_kernel_graphs AS g ON g.correlation_id = k.correlationId "
                   "AND g.global_pid IS k.globalPid ORDER BY k.rowid"
                 : "NULL FROM CUPTI_ACTIVITY_KIND_KERNEL AS k ORDER BY k.rowid";
  STRATA_TRY(impl_->for_each_row(text, [&](sql::Statement& stmt) {
    KernelRow k;
    int64_t* fields[] = {&k.start,
                         &k.end,
                         &k.device_id,
                         &k.context_id,
                         &k.stream_id,
                         &k.correlation_id,
                         &k.global_pid,
                         &k.demangled_name,
                         &k.short_name,
                         &k.mangled_name,
                         &k.grid_x,
                         &k.grid_y,
                         &k.grid_z,
                         &k.block_x,
                         &k.block_y,
                         &k.block_z,
                         &k.registers_per_thread,
                         &k.static_shared_memory,
                         &k.dynamic_shared_memory,
                         &k.shared_memory_executed,
                         &k.local_memory_per_thread,
                         &k.local_memory_total,
                         &k.grid_id};
    int index = 0;
    for (int64_t* field : fields) *field = stmt.column_int(index++);
    k.graph_node_id = stmt.column_optional_int(index++);
    k.graph_id = stmt.column_optional_int(index);
    out.push_back(k);
  }));
  return out;
}

Result<std::vector<std::pair<std::string, int64_t>>> TraceReader::counters() const {
  std::vector<std::pair<std::string, int64_t>> out;
  if (!impl_->has("strata_counters")) return out;
  STRATA_TRY(impl_->for_each_row(
      "SELECT name, value FROM strata_counters ORDER BY name",
      [&](sql::Statement& row) { out.emplace_back(row.column_text(0), row.column_int(1)); }));
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> TraceReader::export_metadata() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (!impl_->has("META_DATA_EXPORT")) return out;
  STRATA_TRY(impl_->for_each_row(
      "SELECT name, value FROM META_DATA_EXPORT ORDER BY rowid",
      [&](sql::Statement& row) { out.emplace_back(row.column_text(0), row.column_text(1)); }));
  return out;
}

}  // namespace strata::store
