// A report table and its three renderings: aligned text (what nsys and
// pstats print), CSV, and JSON (an array of objects keyed by column name).
// Every strata report goes through this one type, so --format behaves the
// same for all of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace strata::report {

enum class Format { kTable, kCsv, kJson };

// "table" | "csv" | "json"; an error naming the bad value otherwise.
Result<Format> parse_format(std::string_view name);

struct Cell {
  std::string text;              // as printed in table and CSV output
  std::optional<double> number;  // when set, JSON gets the number, not the text
};

Cell text_cell(std::string text);
// A number printed with `decimals` digits after the point (and thousands
// separators when `grouped`), kept exact for JSON.
Cell number_cell(double value, int decimals, bool grouped = false);

enum class Align { kLeft, kRight };

struct Column {
  std::string name;
  Align align = Align::kRight;
};

struct Table {
  std::string title;  // printed above the table; not part of CSV/JSON
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

std::string render(const Table& table, Format format);

}  // namespace strata::report
