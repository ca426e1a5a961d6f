// The offline HTML report (`strata report T --format html`): one file that
// opens from disk with no network and shows, in this order, the run's
// summary, the diagnosis findings, the report tables (sortable, filterable),
// the timeline, the flame graph and the kernel sections.
//
// The file is a fixed page (src/html/assets/page.js and page.css, inline)
// and one <script type="application/json"> block of data written by
// script_json.h; the page builds its DOM from that data with textContent
// only, so no name from a trace is ever parsed as markup. Its
// Content-Security-Policy forbids every network access (default-src 'none')
// and allows exactly the page's own inline script and style by their SHA-256:
// no 'unsafe-inline', so even an injected block could not run.
//
// Pure: the CLI gathers the parts (src/cli/report_html.cc) and writes the file.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/gpu_reports.h"
#include "report/table.h"

namespace strata::html {

struct PageTable {
  std::string id;     // the report's registry name ("cuda_gpu_kern_sum"), or "cpu"
  std::string label;  // the tab's label ("Kernels")
  report::GpuReport report;
};

struct PageInput {
  std::string title;                                         // the trace's file name
  std::string generator;                                     // "strata 0.1.0"
  std::vector<std::pair<std::string, std::string>> summary;  // label, value
  std::optional<report::GpuReport> diagnosis;
  std::vector<PageTable> tables;
  nlohmann::json timeline;  // timeline_lod.h's object, or null
  nlohmann::json
      flame;  // {"python": flame_data, "mixed": flame_data}, either may be absent; or null
  std::string kernel_sections;     // the text of `strata report --report kernels`; empty: none
  std::vector<std::string> notes;  // what the page leaves out, and why
};

// The table as the page reads it: {"title", "header", "notes", "skipped",
// "columns": [{"name", "right"}], "rows": [[cell, ...]]}, a cell being its
// text, or [text, number] when it has a number to sort by.
nlohmann::json table_json(const report::GpuReport& report);

// The page's data: everything but the fixed script and style.
nlohmann::json page_data(const PageInput& input);

// The whole file.
std::string render_page(const PageInput& input);

// "sha256-<base64>" of a digest given as 64 hex digits, as CSP names it.
std::string csp_hash_source(std::string_view sha256_hex);

}  // namespace strata::html
