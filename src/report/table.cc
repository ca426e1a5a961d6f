#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace strata::report {

Result<Format> parse_format(std::string_view name) {
  if (name == "table") return Format::kTable;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  return make_error("unknown --format '" + std::string(name) + "' (use table, csv or json)");
}

Cell text_cell(std::string text) {
  return Cell{std::move(text), std::nullopt};
}

Cell number_cell(double value, int decimals, bool grouped) {
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (grouped && std::isfinite(value)) {
    // Thousands separators without depending on the process locale.
    size_t dot = text.find('.');
    std::string int_part = text.substr(0, dot);
    std::string frac = dot == std::string::npos ? "" : text.substr(dot);
    bool negative = !int_part.empty() && int_part[0] == '-';
    if (negative) int_part.erase(0, 1);
    std::string out;
    for (size_t i = 0; i < int_part.size(); ++i) {
      if (i > 0 && (int_part.size() - i) % 3 == 0) out += ',';
      out += int_part[i];
    }
    text = (negative ? "-" : "") + out + frac;
  }
  return Cell{std::move(text), std::isfinite(value) ? std::optional<double>(value) : std::nullopt};
}

namespace {

size_t g_text_width = 0;

}  // namespace

size_t display_columns(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

void set_text_width(size_t columns) {
  g_text_width = columns;
}

size_t text_width() {
  return g_text_width;
}

std::string fit_columns(const std::string& text, size_t columns) {
  if (display_columns(text) <= columns) return text;
  if (columns == 0) return "";
  // Keep columns - 1 characters, then the ellipsis.
  size_t kept = 0;
  size_t end = 0;
  while (end < text.size() && kept < columns - 1) {
    ++end;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    ++kept;
  }
  return text.substr(0, end) + "\u2026";
}

namespace {

// Cuts the last column's cells so that a row fits text_width(), when that
// column holds names (left-aligned) and the others leave it room.
void fit_last_column(const Table& t, std::vector<size_t>& width,
                     std::vector<std::vector<std::string>>& cells) {
  const size_t limit = text_width();
  if (limit == 0 || t.columns.empty() || t.columns.back().align != Align::kLeft) return;
  size_t others = 0;
  for (size_t c = 0; c + 1 < width.size(); ++c) others += width[c] + 2;
  const size_t room = std::max(limit > others ? limit - others : 0, kMinNameColumns);
  if (width.back() <= room) return;
  width.back() = room;
  const FitName fit = t.columns.back().fit ? t.columns.back().fit : fit_columns;
  for (auto& line : cells) line.back() = fit(line.back(), room);
}

// Columns the table takes as text, before its last column is cut.
size_t natural_text_columns(const Table& t) {
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = printable(t.columns[c].name).size();
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
      width[c] = std::max(width[c], printable(row[c].text).size());
    }
  }
  size_t total = width.empty() ? 0 : 2 * (width.size() - 1);
  for (size_t w : width) total += w;
  return total;
}

std::string render_text_as_is(const Table& t) {
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) width[c] = printable(t.columns[c].name).size();
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : t.rows) {
    std::vector<std::string> line;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      line.push_back(c < row.size() ? printable(row[c].text) : "");
      width[c] = std::max(width[c], line.back().size());
    }
    cells.push_back(std::move(line));
  }
  fit_last_column(t, width, cells);
  auto emit = [&](const std::vector<std::string>& line, std::string& out) {
    for (size_t c = 0; c < line.size(); ++c) {
      if (c > 0) out += "  ";
      bool last = c + 1 == line.size();
      if (t.columns[c].align == Align::kRight) {
        out += fmt::format("{:>{}}", line[c], width[c]);
      } else {
        out += last ? line[c] : fmt::format("{:<{}}", line[c], width[c]);
      }
    }
    out += '\n';
  };
  std::string out;
  if (!t.title.empty()) out += printable(t.title) + "\n\n";
  std::vector<std::string> header;
  std::vector<std::string> rule;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    header.push_back(printable(t.columns[c].name));
    rule.push_back(std::string(width[c], '-'));
  }
  emit(header, out);
  emit(rule, out);
  for (const auto& line : cells) emit(line, out);
  return out;
}

// RFC 4180 quoting of a field made printable first: a control byte in a
// name (a kernel's, a file's) prints as \xNN as in the table format, so
// that neither a terminal nor a line-based reader sees it raw.
std::string csv_field(const std::string& text) {
  std::string s = printable(text);
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string render_csv(const Table& t) {
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (c > 0) out += ',';
    out += csv_field(t.columns[c].name);
  }
  out += '\n';
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c > 0) out += ',';
      if (c < row.size()) out += csv_field(row[c].text);
    }
    out += '\n';
  }
  return out;
}

std::string render_json(const Table& t) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : t.rows) {
    nlohmann::ordered_json obj = nlohmann::ordered_json::object();
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (c >= row.size()) {
        obj[t.columns[c].name] = nullptr;
      } else if (row[c].number) {
        obj[t.columns[c].name] = *row[c].number;
      } else {
        obj[t.columns[c].name] = row[c].text;
      }
    }
    rows.push_back(std::move(obj));
  }
  // Invalid UTF-8 from a target (kernel names, output) is replaced, not fatal.
  return escape_json_del(
             rows.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) +
         "\n";
}

Table without_droppable_columns(const Table& table) {
  Table fitted;
  fitted.title = table.title;
  std::vector<size_t> kept;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (table.columns[c].droppable) continue;
    kept.push_back(c);
    fitted.columns.push_back(table.columns[c]);
  }
  for (const auto& row : table.rows) {
    std::vector<Cell> cells;
    for (size_t c : kept) cells.push_back(c < row.size() ? row[c] : Cell{});
    fitted.rows.push_back(std::move(cells));
  }
  return fitted;
}

// A copy only for the rare table that drops columns.
std::string render_text(const Table& table) {
  return drops_columns(table) ? render_text_as_is(without_droppable_columns(table))
                              : render_text_as_is(table);
}

}  // namespace

bool drops_columns(const Table& table) {
  const size_t limit = text_width();
  const bool any = std::any_of(table.columns.begin(), table.columns.end(),
                               [](const Column& c) { return c.droppable; });
  return limit > 0 && any && natural_text_columns(table) > limit;
}

Table fitted_for_text(const Table& table) {
  return drops_columns(table) ? without_droppable_columns(table) : table;
}

std::string render(const Table& table, Format format) {
  switch (format) {
    case Format::kCsv:
      return render_csv(table);
    case Format::kJson:
      return render_json(table);
    case Format::kTable:
      break;
  }
  return render_text(table);
}

}  // namespace strata::report
