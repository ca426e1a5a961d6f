#include "report/diagnosis_report.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace strata::report {
namespace {

std::string duration(int64_t ns) {
  if (ns < 1'000'000) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

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

}  // namespace

GpuReport diagnosis_report(const analysis::Diagnosis& d, const std::string& source,
                           const GpuReportOptions& options) {
  GpuReport r;
  const bool text = options.format == Format::kTable;
  r.table.title = " ** Diagnosis (diagnosis):";
  if (!d.idle.has_activity) {
    r.table.columns = {{"#"}, {"Could save (ns)"}, {"Window (%)"}, {"Layer", Align::kLeft},
                       {"Rule", Align::kLeft}, {"Finding", Align::kLeft}};
    r.skipped = "SKIPPED: " + printable(source) + " has no kernel, copy or memset to diagnose.";
    return r;
  }
  const int64_t window = d.idle.window_ns();
  if (text) {
    r.header.push_back(fmt::format(
        "Work window (first kernel to last GPU activity): {}; GPU busy {:.1f} %, idle {} in {} gaps",
        duration(window), share(d.idle.busy_ns, window), duration(d.idle.idle_ns()),
        d.idle.gaps));
    if (d.startup_ns > 0) {
      std::vector<std::string> parts;
      for (const auto& p : d.startup_parts) {
        parts.push_back(fmt::format("{} {}", p.name, duration(p.total_ns)));
      }
      r.header.push_back(fmt::format("Start-up (first CUDA call to first kernel): {}{}{}",
                                     duration(d.startup_ns), parts.empty() ? "" : "; heaviest: ",
                                     joined(parts, ", ")));
    }
    r.table.columns = {{"#"},
                       {"Could save"},
                       {"Window (%)"},
                       {"Layer", Align::kLeft},
                       {"Rule", Align::kLeft},
                       {"Finding", Align::kLeft}};
  } else {
    r.table.columns = {{"#"},
                       {"Could save (ns)"},
                       {"Window (%)"},
                       {"Layer", Align::kLeft},
                       {"Rule", Align::kLeft},
                       {"Finding", Align::kLeft},
                       {"Evidence", Align::kLeft},
                       {"Try", Align::kLeft},
                       {"Show again", Align::kLeft}};
  }
  int rank = 0;
  for (const auto& f : d.findings) {
    ++rank;
    std::vector<Cell> row = {
        Cell{std::to_string(rank), static_cast<double>(rank)},
        text ? text_cell(duration(f.gain_ns)) : Cell{std::to_string(f.gain_ns), static_cast<double>(f.gain_ns)},
        number_cell(share(f.gain_ns, window), 1),
        text_cell(layer_name(f.layer)),
        text_cell(f.rule),
        text_cell(f.cause)};
    if (!text) {
      row.push_back(text_cell(printable(joined(f.evidence, "; "))));
      row.push_back(text_cell(f.try_this));
      row.push_back(text_cell("strata report " + printable(source) + " " + f.show_again));
    } else {
      r.notes.push_back(fmt::format("#{} {}", rank, f.rule));
      for (const auto& e : f.evidence) r.notes.push_back("   evidence: " + printable(e));
      r.notes.push_back("   try:      " + f.try_this);
      r.notes.push_back("   again:    strata report " + printable(source) + " " + f.show_again);
    }
    r.table.rows.push_back(std::move(row));
  }
  if (d.findings.empty() && text) {
    r.notes.push_back(fmt::format(
        "No bottleneck in the GPU timeline: no rule found a cause worth 10 % of the work "
        "window (GPU busy {:.1f} %).",
        share(d.idle.busy_ns, window)));
  }
  return r;
}

GpuReport diagnosis_report_of(const store::GpuTables& tables, const std::string& source,
                              const GpuReportOptions& options) {
  return diagnosis_report(analysis::diagnose_gpu_trace(tables), source, options);
}

}  // namespace strata::report
