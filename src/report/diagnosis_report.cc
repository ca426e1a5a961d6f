#include "report/diagnosis_report.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace strata::report {
namespace {

using analysis::short_duration;

double share(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

const char* layer_name(analysis::FindingLayer layer) {
  return layer == analysis::FindingLayer::kKernel ? "kernel" : "timeline";
}

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

// One column set for every format and for SKIPPED: text shortens Could save
// to a duration and moves evidence, try and the command under the table.
std::vector<Column> columns(bool text) {
  std::vector<Column> c = {{"#"},
                           {text ? "Could save" : "Could save (ns)"},
                           {"Window (%)"},
                           {"Layer", Align::kLeft},
                           {"Rule", Align::kLeft},
                           {"Finding", Align::kLeft}};
  if (!text) {
    for (const char* name : {"Evidence", "Try", "Show again"}) c.push_back({name, Align::kLeft});
  }
  return c;
}

// The header: the window, where its idle time went, and start-up.
void add_header(const analysis::Diagnosis& d, GpuReport& r) {
  const int64_t window = d.idle.window_ns();
  const analysis::IdleCauses& c = d.idle.idle;
  r.header.push_back(fmt::format(
      "Work window (first kernel to last GPU activity): {}; GPU busy {:.1f} %, idle {} in {} "
      "gaps",
      short_duration(window), share(d.idle.busy_ns, window), short_duration(d.idle.idle_ns()),
      d.idle.gaps));
  r.header.push_back(fmt::format(
      "Idle, by what the issuing thread was doing: synchronizing {}, launching {}, other CUDA "
      "calls {}, outside recorded CUDA calls {}; already queued {}; unattributed {}",
      short_duration(c.sync_ns), short_duration(c.launch_ns), short_duration(c.other_api_ns),
      short_duration(c.host_ns), short_duration(c.queued_ns), short_duration(c.unattributed_ns)));
  if (d.startup_ns > 0) {
    std::vector<std::string> parts;
    for (const auto& p : d.startup_parts) {
      parts.push_back(fmt::format("{} {}", p.name, short_duration(p.total_ns)));
    }
    r.header.push_back(fmt::format("Start-up (first CUDA call to first kernel): {}{}{}",
                                   short_duration(d.startup_ns),
                                   parts.empty() ? "" : "; heaviest: ", joined(parts, ", ")));
  }
}

// Under the table: what the rules could not see, and the verdict when none fired.
void add_limits(const analysis::Diagnosis& d, bool shapes_known, GpuReport& r) {
  const int64_t window = d.idle.window_ns();
  const double min_share = d.thresholds.min_share;
  if (d.idle.idle.unattributed_ns >= min_share * window && d.idle.idle.unattributed_ns > 0) {
    r.notes.push_back(fmt::format(
        "{} of idle time ({:.1f} % of the window) is unattributed: the trace has no CUDA call "
        "that issued the activity ending those gaps (an export without CUDA API records?)",
        short_duration(d.idle.idle.unattributed_ns), share(d.idle.idle.unattributed_ns, window)));
  }
  if (!shapes_known) {
    r.notes.push_back("kernel.small_grid not checked: the trace has no SM count "
                      "(TARGET_INFO_GPU) or no kernel launch configurations");
  }
  if (d.findings.empty()) {
    r.notes.push_back(fmt::format(
        "No bottleneck found in the GPU timeline: no rule found a cause worth {:.0f} % of the "
        "work window (GPU busy {:.1f} %).",
        100 * min_share, share(d.idle.busy_ns, window)));
  } else if (d.findings.size() > 1) {
    r.notes.push_back("Findings overlap: what they could save does not add up.");
  }
}

}  // namespace

GpuReport diagnosis_report(const analysis::Diagnosis& d, const std::string& source,
                           bool shapes_known, const GpuReportOptions& options) {
  GpuReport r;
  const bool text = options.format == Format::kTable;
  r.table.title = " ** Diagnosis (diagnosis):";
  r.table.columns = columns(text);
  if (!d.idle.has_activity) {
    r.skipped = "SKIPPED: " + printable(source) + " has no kernel, copy or memset to diagnose.";
    return r;
  }
  const int64_t window = d.idle.window_ns();
  if (text) add_header(d, r);
  const std::string again = "strata report " + shell_quote(source) + " ";
  int rank = 0;
  for (const auto& f : d.findings) {
    ++rank;
    std::vector<Cell> row = {
        Cell{std::to_string(rank), static_cast<double>(rank)},
        text ? text_cell(short_duration(f.gain_ns))
             : Cell{std::to_string(f.gain_ns), static_cast<double>(f.gain_ns)},
        number_cell(share(f.gain_ns, window), 1),
        text_cell(layer_name(f.layer)),
        text_cell(f.rule),
        text_cell(f.cause)};
    if (text) {
      r.notes.push_back(fmt::format("#{} {}", rank, f.rule));
      for (const auto& e : f.evidence) r.notes.push_back("   evidence: " + printable(e));
      r.notes.push_back("   try:      " + f.try_this);
      r.notes.push_back("   again:    " + printable(again + f.show_again));
    } else {
      row.push_back(text_cell(joined(f.evidence, "; ")));
      row.push_back(text_cell(f.try_this));
      row.push_back(text_cell(again + f.show_again));
    }
    r.table.rows.push_back(std::move(row));
  }
  if (text) add_limits(d, shapes_known, r);
  return r;
}

GpuReport diagnosis_report_of(const store::GpuTables& tables, const std::string& source,
                              const GpuReportOptions& options) {
  analysis::DiagnosisInputs inputs;
  inputs.gpu = &tables;
  return diagnosis_report(analysis::diagnose(inputs), source,
                          analysis::has_launch_shapes(tables), options);
}

}  // namespace strata::report
