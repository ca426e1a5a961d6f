#include "store/kernel_metric_rows.h"

#include <fmt/format.h>

#include "common/strings.h"
#include "store/sqlite_util.h"

namespace strata::store {

Status write_profiled_launch(TraceWriter& writer, const ProfiledLaunch& launch) {
  std::string name = printable(writer.path());
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      sql::Statement::prepare(
          writer.handle(),
          "INSERT INTO strata_kernel_metrics (pid, device, correlation_id, invocation, "
          "kernel_name, "
          "status, start_ns, end_ns, metric, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          name));
  auto insert = [&](const std::pair<std::string, double>* metric) -> Status {
    stmt.bind(1, launch.pid);
    stmt.bind(2, launch.device);
    stmt.bind(3, launch.correlation_id);
    stmt.bind(4, launch.invocation);
    stmt.bind(5, std::string_view(launch.kernel_name));
    stmt.bind(6, launch.status);
    stmt.bind(7, launch.start_ns);
    stmt.bind(8, launch.end_ns);
    if (metric) {
      stmt.bind(9, std::string_view(metric->first));
      stmt.bind(10, metric->second);
    } else {
      stmt.bind_null(9);
      stmt.bind_null(10);
    }
    if (stmt.step() != SQLITE_DONE) return sql::error(writer.handle(), name);
    stmt.reset();
    return Ok{};
  };
  if (launch.metrics.empty()) return insert(nullptr);
  for (const auto& metric : launch.metrics) {
    STRATA_TRY(insert(&metric));
  }
  return Ok{};
}

Status write_kernels_seen(TraceWriter& writer, const std::vector<KernelSeenRow>& rows) {
  std::string name = printable(writer.path());
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      sql::Statement::prepare(
          writer.handle(),
          "INSERT INTO strata_kernels_seen (pid, kernel_name, launches) VALUES (?, ?, ?)", name));
  for (const KernelSeenRow& row : rows) {
    stmt.bind(1, row.pid);
    stmt.bind(2, std::string_view(row.kernel_name));
    stmt.bind(3, row.launches);
    if (stmt.step() != SQLITE_DONE) return sql::error(writer.handle(), name);
    stmt.reset();
  }
  return Ok{};
}

namespace {

// Runs `select` on `table` and calls on_row(statement) for each row; no row
// at all when the trace has no such table (older strata files, Nsight
// Systems exports). Errors name the file and the table.
template <typename OnRow>
Status for_each_row(const TraceReader& reader, const char* table, const char* select,
                    OnRow&& on_row) {
  std::string name = printable(reader.path());
  STRATA_ASSIGN_OR_RETURN(auto exists, sql::table_exists(reader.handle(), table, name));
  if (!exists) return Ok{};
  auto stmt = sql::Statement::prepare(reader.handle(), select, name);
  if (!stmt) return make_error(fmt::format("{}: {}: {}", name, table, stmt.error().message));
  int rc;
  while ((rc = stmt->step()) == SQLITE_ROW) on_row(*stmt);
  if (rc != SQLITE_DONE)
    return sql::error(reader.handle(), fmt::format("{}: reading {}", name, table));
  return Ok{};
}

}  // namespace

Result<std::vector<ProfiledLaunch>> read_profiled_launches(const TraceReader& reader) {
  std::vector<ProfiledLaunch> launches;
  Status read = for_each_row(
      reader, "strata_kernel_metrics",
      "SELECT pid, device, correlation_id, invocation, kernel_name, status, start_ns, end_ns, "
      "metric, value FROM strata_kernel_metrics ORDER BY rowid",
      [&](const sql::Statement& stmt) {
        ProfiledLaunch row;
        row.pid = stmt.column_int(0);
        row.device = stmt.column_int(1);
        row.correlation_id = stmt.column_int(2);
        row.invocation = stmt.column_int(3);
        row.kernel_name = stmt.column_text(4);
        row.status = stmt.column_int(5);
        row.start_ns = stmt.column_int(6);
        row.end_ns = stmt.column_int(7);
        // A launch's rows are written together: consecutive rows with the
        // same key belong to one launch.
        bool same = !launches.empty() && [&] {
          const ProfiledLaunch& last = launches.back();
          return last.pid == row.pid && last.device == row.device &&
                 last.correlation_id == row.correlation_id && last.invocation == row.invocation &&
                 last.kernel_name == row.kernel_name && last.status == row.status &&
                 last.start_ns == row.start_ns && last.end_ns == row.end_ns;
        }();
        if (!same) launches.push_back(std::move(row));
        // A NULL value is a metric CUPTI could not evaluate (NaN, which
        // SQLite stores as NULL): left out, so that no report prints it as 0.
        if (!stmt.column_null(8) && !stmt.column_null(9)) {
          launches.back().metrics.emplace_back(stmt.column_text(8), stmt.column_double(9));
        }
      });
  if (!read) return read.error();
  return launches;
}

Result<std::vector<KernelSeenRow>> read_kernels_seen(const TraceReader& reader) {
  std::vector<KernelSeenRow> rows;
  Status read = for_each_row(
      reader, "strata_kernels_seen",
      "SELECT kernel_name, SUM(launches) AS n FROM strata_kernels_seen GROUP BY kernel_name "
      "ORDER BY n DESC, kernel_name",
      [&](const sql::Statement& stmt) {
        KernelSeenRow row;
        row.kernel_name = stmt.column_text(0);
        row.launches = stmt.column_int(1);
        rows.push_back(std::move(row));
      });
  if (!read) return read.error();
  return rows;
}

Result<bool> kernel_profiles_present(const TraceReader& reader) {
  std::string name = printable(reader.path());
  STRATA_ASSIGN_OR_RETURN(bool exists,
                          sql::table_exists(reader.handle(), "strata_kernel_metrics", name));
  if (!exists) return false;
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      sql::Statement::prepare(reader.handle(), "SELECT 1 FROM strata_kernel_metrics LIMIT 1",
                              name + ": strata_kernel_metrics"));
  int rc = stmt.step();
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE)
    return sql::error(reader.handle(), name + ": reading strata_kernel_metrics");
  return false;
}

}  // namespace strata::store
