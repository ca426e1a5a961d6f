#include "store/diagnose_rows.h"

#include <fmt/format.h>

#include "common/strings.h"
#include "store/sqlite_util.h"

namespace strata::store {
namespace {

Result<bool> table_exists(const TraceReader& reader, const char* table) {
  const std::string name = printable(reader.path());
  STRATA_ASSIGN_OR_RETURN(
      auto stmt, sql::Statement::prepare(
                     reader.handle(),
                     "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name));
  stmt.bind(1, std::string_view(table));
  int rc = stmt.step();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sql::error(reader.handle(), name);
}

}  // namespace

Status write_diagnose_record(TraceWriter& writer, const DiagnoseRecord& record) {
  const std::string name = printable(writer.path());
  STRATA_ASSIGN_OR_RETURN(
      auto layer, sql::Statement::prepare(writer.handle(),
                                          "INSERT INTO strata_diagnose_layers (position, layer, "
                                          "ran, reason, elapsed_ns) VALUES (?, ?, ?, ?, ?)",
                                          name));
  int64_t position = 0;
  for (const auto& row : record.layers) {
    layer.bind(1, position++);
    layer.bind(2, std::string_view(row.layer));
    layer.bind(3, int64_t{row.ran ? 1 : 0});
    layer.bind(4, std::string_view(row.reason));
    layer.bind(5, row.elapsed_ns);
    if (layer.step() != SQLITE_DONE) return sql::error(writer.handle(), name);
    layer.reset();
  }
  STRATA_ASSIGN_OR_RETURN(
      auto setting,
      sql::Statement::prepare(writer.handle(),
                              "INSERT INTO strata_diagnose_settings (name, value) VALUES (?, ?)",
                              name));
  for (const auto& [key, value] : record.settings) {
    setting.bind(1, std::string_view(key));
    setting.bind(2, std::string_view(value));
    if (setting.step() != SQLITE_DONE) return sql::error(writer.handle(), name);
    setting.reset();
  }
  return Ok{};
}

Result<bool> diagnose_record_present(const TraceReader& reader) {
  STRATA_ASSIGN_OR_RETURN(bool exists, table_exists(reader, "strata_diagnose_layers"));
  if (!exists) return false;
  const std::string name = printable(reader.path());
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          sql::Statement::prepare(reader.handle(),
                                                  "SELECT 1 FROM strata_diagnose_layers LIMIT 1",
                                                  name));
  int rc = stmt.step();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sql::error(reader.handle(), name);
}

Result<DiagnoseRecord> read_diagnose_record(const TraceReader& reader) {
  DiagnoseRecord record;
  const std::string name = printable(reader.path());
  STRATA_ASSIGN_OR_RETURN(bool layers, table_exists(reader, "strata_diagnose_layers"));
  if (layers) {
    auto stmt = sql::Statement::prepare(
        reader.handle(),
        "SELECT layer, ran, reason, elapsed_ns FROM strata_diagnose_layers ORDER BY position, "
        "rowid",
        name);
    if (!stmt) {
      return make_error(fmt::format("{}: strata_diagnose_layers: {}", name, stmt.error().message));
    }
    int rc;
    while ((rc = stmt->step()) == SQLITE_ROW) {
      DiagnoseLayerRow row;
      row.layer = stmt->column_text(0);
      row.ran = stmt->column_int(1) != 0;
      row.reason = stmt->column_text(2);
      row.elapsed_ns = stmt->column_int(3);
      record.layers.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) return sql::error(reader.handle(), name);
  }
  STRATA_ASSIGN_OR_RETURN(bool settings, table_exists(reader, "strata_diagnose_settings"));
  if (settings) {
    auto stmt = sql::Statement::prepare(
        reader.handle(), "SELECT name, value FROM strata_diagnose_settings ORDER BY rowid", name);
    if (!stmt) {
      return make_error(
          fmt::format("{}: strata_diagnose_settings: {}", name, stmt.error().message));
    }
    int rc;
    while ((rc = stmt->step()) == SQLITE_ROW) {
      record.settings.emplace_back(stmt->column_text(0), stmt->column_text(1));
    }
    if (rc != SQLITE_DONE) return sql::error(reader.handle(), name);
  }
  return record;
}

}  // namespace strata::store
