#include "html/page.h"

#include "html/page_assets.h"
#include "html/script_json.h"

namespace strata::html {

nlohmann::json table_json(const report::GpuReport& r) {
  nlohmann::json columns = nlohmann::json::array();
  for (const auto& c : r.table.columns) {
    columns.push_back({{"name", c.name}, {"right", c.align == report::Align::kRight}});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.table.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& cell : row) {
      if (cell.number) {
        cells.push_back({cell.text, *cell.number});
      } else {
        cells.push_back(cell.text);
      }
    }
    rows.push_back(std::move(cells));
  }
  return {{"title", r.table.title}, {"header", r.header}, {"notes", r.notes},
          {"skipped", r.skipped},   {"columns", columns}, {"rows", rows}};
}

nlohmann::json page_data(const PageInput& in) {
  nlohmann::json summary = nlohmann::json::array();
  for (const auto& [label, value] : in.summary) summary.push_back({label, value});
  nlohmann::json tables = nlohmann::json::array();
  for (const auto& t : in.tables) {
    nlohmann::json j = table_json(t.report);
    j["id"] = t.id;
    j["label"] = t.label;
    tables.push_back(std::move(j));
  }
  nlohmann::json data = {{"title", in.title},
                         {"generator", in.generator},
                         {"summary", summary},
                         {"tables", tables},
                         {"timeline", in.timeline},
                         {"flame", in.flame},
                         {"kernels", in.kernel_sections},
                         {"notes", in.notes}};
  data["diagnosis"] = in.diagnosis ? table_json(*in.diagnosis) : nlohmann::json();
  return data;
}

std::string csp_hash_source(std::string_view hex) {
  static constexpr char kBase64[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  std::string out = "sha256-";
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
    out += kBase64[v >> 18 & 63];
    out += kBase64[v >> 12 & 63];
    out += i + 1 < bytes.size() ? kBase64[v >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kBase64[v & 63] : '=';
  }
  return out;
}

std::string render_page(const PageInput& in) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Before anything that loads or runs: the policy covers the whole page.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src '";
  out += csp_hash_source(kPageScriptSha256Hex);
  out += "'; style-src '";
  out += csp_hash_source(kPageStyleSha256Hex);
  out += "'; img-src data:; base-uri 'none'; form-action 'none'\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>strata report</title>\n<style>";
  out += kPageStyle;
  out +=
      "</style>\n</head>\n<body>\n<noscript>This report is drawn by its inline script; "
      "allow JavaScript for this file to see it.</noscript>\n"
      "<script type=\"application/json\" id=\"strata-data\">";
  out += script_json(page_data(in));
  out += "</script>\n<script>";
  out += kPageScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace strata::html
