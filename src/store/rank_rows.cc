#include "store/rank_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "store/sqlite_util.h"

namespace strata::store {

Status write_rank_row(TraceWriter& writer, const RankRow& row) {
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      sql::Statement::prepare(
          writer.handle(),
          "INSERT INTO strata_ranks (global_pid, rank, local_rank, world_size, local_world_size, "
          "launcher, job_id, variables, boot_id, clock_monotonic_ns, clock_realtime_ns, "
          "clock_error_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          printable(writer.path())));
  nlohmann::ordered_json vars = nlohmann::ordered_json::object();
  for (const auto& [name, value] : row.variables) vars[name] = value;
  stmt.bind(1, row.global_pid);
  stmt.bind(2, row.rank);
  stmt.bind(3, row.local_rank);
  stmt.bind(4, row.world_size);
  stmt.bind(5, row.local_world_size);
  stmt.bind(6, std::string_view(row.launcher));
  stmt.bind(7, std::string_view(row.job_id));
  // Environment values need not be UTF-8; replace rather than throw.
  std::string vars_text = vars.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  stmt.bind(8, std::string_view(vars_text));
  if (row.boot_id.empty()) {
    stmt.bind_null(9);
  } else {
    stmt.bind(9, std::string_view(row.boot_id));
  }
  stmt.bind(10, row.clock_monotonic_ns);
  stmt.bind(11, row.clock_realtime_ns);
  stmt.bind(12, row.clock_error_ns);
  if (stmt.step() != SQLITE_DONE) return sql::error(writer.handle(), printable(writer.path()));
  return Ok{};
}

Result<std::vector<RankRow>> read_rank_rows(const TraceReader& reader) {
  std::vector<RankRow> rows;
  std::string name = printable(reader.path());
  STRATA_ASSIGN_OR_RETURN(
      auto exists,
      sql::Statement::prepare(
          reader.handle(),
          "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'strata_ranks'", name));
  int rc = exists.step();
  if (rc == SQLITE_DONE) return rows;
  if (rc != SQLITE_ROW) return sql::error(reader.handle(), name);
  auto stmt = sql::Statement::prepare(
      reader.handle(),
      "SELECT global_pid, rank, local_rank, world_size, local_world_size, launcher, job_id, "
      "variables, boot_id, clock_monotonic_ns, clock_realtime_ns, clock_error_ns "
      "FROM strata_ranks ORDER BY rowid",
      name);
  if (!stmt) return make_error(fmt::format("{}: strata_ranks: {}", name, stmt.error().message));
  while ((rc = stmt->step()) == SQLITE_ROW) {
    RankRow r;
    r.global_pid = stmt->column_optional_int(0);
    r.rank = stmt->column_optional_int(1);
    r.local_rank = stmt->column_optional_int(2);
    r.world_size = stmt->column_optional_int(3);
    r.local_world_size = stmt->column_optional_int(4);
    r.launcher = stmt->column_text(5);
    r.job_id = stmt->column_text(6);
    auto vars = nlohmann::ordered_json::parse(stmt->column_text(7), nullptr, false);
    if (vars.is_object()) {
      for (auto it = vars.begin(); it != vars.end(); ++it) {
        if (it.value().is_string())
          r.variables.emplace_back(it.key(), it.value().get<std::string>());
      }
    }
    r.boot_id = stmt->column_text(8);
    r.clock_monotonic_ns = stmt->column_int(9);
    r.clock_realtime_ns = stmt->column_int(10);
    r.clock_error_ns = stmt->column_int(11);
    rows.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return sql::error(reader.handle(), name);
  return rows;
}

Result<RankFile> load_rank_file(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(auto reader, TraceReader::open(path));
  RankFile out;
  out.source = printable(path);
  if (auto run = reader.run()) out.host = run->host;
  STRATA_ASSIGN_OR_RETURN(auto rows, read_rank_rows(reader));
  auto whole =
      std::find_if(rows.begin(), rows.end(), [](const RankRow& r) { return !r.global_pid; });
  if (whole != rows.end()) {
    out.row = *whole;
  } else if (!rows.empty()) {
    out.row = rows.front();
  }
  GpuLoadOptions load;
  load.tables = kKernelTable | kMemcpyTable | kMemsetTable;
  load.kernel_links = true;
  STRATA_ASSIGN_OR_RETURN(out.gpu, load_gpu_tables(reader.handle(), reader.path(), load));
  return out;
}

}  // namespace strata::store
