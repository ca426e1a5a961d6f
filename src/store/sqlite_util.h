// Thin RAII helpers over the SQLite C API used by the writer and the reader.
// Not thread-safe; each object belongs to the connection it was made from.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace strata::store::sql {

// A prepared statement; finalized on destruction.
class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept : stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  // `what` names the file for error messages.
  static Result<Statement> prepare(sqlite3* db, std::string_view sql, std::string_view what);

  void bind(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  void bind(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int index, const std::optional<int64_t>& value);
  void bind_null(int index) { sqlite3_bind_null(stmt_, index); }

  // SQLITE_ROW or SQLITE_DONE; any other code is returned as is.
  int step() { return sqlite3_step(stmt_); }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
  double column_double(int index) const { return sqlite3_column_double(stmt_, index); }
  bool column_null(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }
  std::optional<int64_t> column_optional_int(int index) const;
  // Text of a column; "" for NULL.
  std::string column_text(int index) const;

  sqlite3_stmt* get() const { return stmt_; }

 private:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs statements that return no rows.
Status exec(sqlite3* db, std::string_view sql, std::string_view what);

// "<what>: <sqlite message>" as one printable line; for SQLITE_CORRUPT and
// SQLITE_NOTADB "<what>: corrupt or truncated SQLite database (<message>)".
// A read error is always this error, never "no rows": callers that probe a
// table tell "absent" (table_exists) from "unreadable" (this).
Error error(sqlite3* db, std::string_view what);

// Whether the database has a table of that name (case-insensitive, as
// SQLite's names are); `what` names the file in the error.
Result<bool> table_exists(sqlite3* db, std::string_view table, std::string_view what);
// Whether `table` has a column of that name (tables gain columns over
// versions; older traces lack the newer ones).
Result<bool> column_exists(sqlite3* db, std::string_view table, std::string_view column,
                           std::string_view what);
Error error_code(int code, std::string_view what);

// Quotes an identifier for SQL text ("a""b").
std::string quote_identifier(std::string_view name);

// JSON array of strings <-> argv.
std::string argv_to_json(const std::vector<std::string>& argv);
std::optional<std::vector<std::string>> argv_from_json(std::string_view text);

}  // namespace strata::store::sql
