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

// How a name wider than the room a terminal leaves it is cut to `columns`.
using FitName = std::string (*)(const std::string& text, size_t columns);

struct Column {
  std::string name;
  Align align = Align::kRight;
  FitName fit = nullptr;  // nullptr: fit_columns, cut at the end
  // A secondary figure (compare's means beside its medians): left out of the
  // text rendering when the table would be wider than text_width() with it.
  // CSV and JSON keep it.
  bool droppable = false;
};

struct Table {
  std::string title;  // printed above the table; not part of CSV/JSON
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

std::string render(const Table& table, Format format);

// The width text tables fit in, in columns; 0 = no limit. When a table is
// wider, the cells of its last column (the names: functions, kernels,
// ranges) are cut to fit and end in "…", keeping at least
// kMinNameColumns of them. CSV and JSON are never cut. The CLI sets it once
// (the terminal's width, COLUMNS, or 0 with --wide or when stdout is not a
// terminal); every text table reads it, so all of them behave alike.
inline constexpr size_t kMinNameColumns = 24;
void set_text_width(size_t columns);
size_t text_width();

// Whether the text rendering leaves out the table's droppable columns: it
// has some, and with them it is wider than text_width().
bool drops_columns(const Table& table);
// The table as the text rendering shows it: without its droppable columns
// when drops_columns().
Table fitted_for_text(const Table& table);

// Columns a string takes on a terminal, counting each UTF-8 sequence as one.
size_t display_columns(const std::string& text);

// `text` cut to at most `columns` columns, ending in "…" when cut; never
// splits a UTF-8 sequence.
std::string fit_columns(const std::string& text, size_t columns);

}  // namespace strata::report
