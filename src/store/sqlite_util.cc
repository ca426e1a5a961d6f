#include "store/sqlite_util.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "common/strings.h"

namespace strata::store::sql {

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Result<Statement> Statement::prepare(sqlite3* db, std::string_view sql, std::string_view what) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return error(db, what);
  }
  return Statement(stmt);
}

void Statement::bind(int index, const std::optional<int64_t>& value) {
  if (value) {
    bind(index, *value);
  } else {
    bind_null(index);
  }
}

std::optional<int64_t> Statement::column_optional_int(int index) const {
  if (column_null(index)) return std::nullopt;
  return column_int(index);
}

std::string Statement::column_text(int index) const {
  const unsigned char* text = sqlite3_column_text(stmt_, index);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, index)));
}

Status exec(sqlite3* db, std::string_view sql, std::string_view what) {
  std::string text(sql);
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return error(db, what);
  }
  return Ok{};
}

Error error(sqlite3* db, std::string_view what) {
  // Corruption is named as such whatever SQLite's wording, so that every
  // verb says of a damaged file what `strata info` says.
  int code = sqlite3_errcode(db) & 0xff;
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
    return make_error(fmt::format("{}: corrupt or truncated SQLite database ({})", what,
                                  printable(sqlite3_errmsg(db))));
  }
  return make_error(fmt::format("{}: {}", what, printable(sqlite3_errmsg(db))));
}

Result<bool> table_exists(sqlite3* db, std::string_view table, std::string_view what) {
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      Statement::prepare(
          db,
          "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE LIMIT 1",
          what));
  stmt.bind(1, table);
  int rc = stmt.step();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return error(db, fmt::format("{}: reading sqlite_master", what));
}

Result<bool> column_exists(sqlite3* db, std::string_view table, std::string_view column,
                           std::string_view what) {
  STRATA_ASSIGN_OR_RETURN(
      auto stmt, Statement::prepare(
                     db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ? COLLATE NOCASE", what));
  stmt.bind(1, table);
  stmt.bind(2, column);
  int rc = stmt.step();
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return error(db, fmt::format("{}: reading the columns of {}", what, table));
}

Error error_code(int code, std::string_view what) {
  return make_error(fmt::format("{}: {}", what, sqlite3_errstr(code)));
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string argv_to_json(const std::vector<std::string>& argv) {
  // Invalid UTF-8 in an argument is replaced rather than thrown on: the
  // command is metadata, and losing a byte beats losing the trace.
  return nlohmann::json(argv).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::vector<std::string>> argv_from_json(std::string_view text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return std::nullopt;
  std::vector<std::string> argv;
  for (const auto& word : parsed) {
    if (!word.is_string()) return std::nullopt;
    argv.push_back(word.get<std::string>());
  }
  return argv;
}

}  // namespace strata::store::sql
