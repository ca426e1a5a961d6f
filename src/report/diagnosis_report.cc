#include "report/diagnosis_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "analysis/diagnose_thresholds.h"
#include "common/strings.h"
#include "report/table.h"

namespace strata::report {
namespace {

using analysis::short_duration;

double share(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
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
      "calls {}, outside recorded CUDA calls {}; already queued {}; unattributed {}; set-up and "
      "first uses (paid once) {}",
      short_duration(c.sync_ns), short_duration(c.launch_ns), short_duration(c.other_api_ns),
      short_duration(c.host_ns), short_duration(c.queued_ns), short_duration(c.unattributed_ns),
      short_duration(c.first_use_ns)));
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

// The findings as the table's rows, largest gain first; text puts each one's
// evidence, what to try and the command that shows it again under the table.
// A share is of the GPU's work window, or for a CPU finding of `cpu_base`
// (the run less start-up, or the range).
void add_finding_rows(const std::vector<analysis::Finding>& findings, int64_t window,
                      int64_t cpu_base, const std::string& source, bool text, GpuReport& r) {
  const std::string again = "strata report " + shell_quote(source) + " ";
  int rank = 0;
  for (const auto& f : findings) {
    ++rank;
    std::vector<Cell> row = {
        Cell{std::to_string(rank), static_cast<double>(rank)},
        text ? text_cell(short_duration(f.gain_ns))
             : Cell{std::to_string(f.gain_ns), static_cast<double>(f.gain_ns)},
        number_cell(share(f.gain_ns, f.layer == analysis::FindingLayer::kCpu ? cpu_base : window),
                    1),
        text_cell(analysis::finding_layer_name(f.layer)),
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
    r.notes.push_back(
        "kernel.small_grid not checked: the trace has no SM count "
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
  if (text) add_header(d, r);
  add_finding_rows(d.findings, d.idle.window_ns(), d.cpu_base_ns, source, text, r);
  if (text) add_limits(d, shapes_known, r);
  return r;
}

GpuReport diagnosis_report_of(const store::GpuTables& tables, const std::string& source,
                              const GpuReportOptions& options) {
  analysis::DiagnosisInputs inputs;
  inputs.gpu = &tables;
  return diagnosis_report(analysis::diagnose(inputs), source, analysis::has_launch_shapes(tables),
                          options);
}

}  // namespace strata::report

// ---- strata diagnose's verdict --------------------------------------------

namespace strata::report {
namespace {

using analysis::short_duration;

nlohmann::ordered_json summary_json(const std::optional<analysis::Summary>& s) {
  if (!s) return nullptr;
  return {{"count", s->count}, {"min", s->min},   {"median", s->median},
          {"max", s->max},     {"mean", s->mean}, {"stddev", s->stddev}};
}

std::string baseline_line(const analysis::BaselineFacts& b) {
  if (!b.wall_ns) {
    return fmt::format("Baseline: {} measured run{}, none succeeded", b.runs,
                       b.runs == 1 ? "" : "s");
  }
  const auto& w = *b.wall_ns;
  std::string line = fmt::format(
      "Baseline: {} of {} runs succeeded; wall median {} (min {}, max {}, spread {:.1f} %)",
      b.succeeded, b.runs, short_duration(static_cast<int64_t>(w.median)),
      short_duration(static_cast<int64_t>(w.min)), short_duration(static_cast<int64_t>(w.max)),
      100 * b.wall_cv);
  if (b.cpu_ns) {
    line += fmt::format("; CPU time (user+sys) median {}, {:.0f} % of wall",
                        short_duration(static_cast<int64_t>(b.cpu_ns->median)), 100 * b.on_cpu);
  }
  return line;
}

// "Recorded run: wall 6.31 s (1.21x the baseline median), CPU time 6.20 s
// (1.40x), 127363 page faults (baseline median 9157)": the run every
// layer's figures are of, beside the bare runs.
std::optional<std::string> recorded_line(const analysis::DiagnoseVerdict& v) {
  if (!v.recorded) return std::nullopt;
  const auto& r = *v.recorded;
  std::string line = "Recorded run: wall " + short_duration(r.wall_ns);
  if (r.wall_ratio > 0) line += fmt::format(" ({:.2f}x the baseline median)", r.wall_ratio);
  if (r.cpu_ns > 0) {
    line += ", CPU time " + short_duration(r.cpu_ns);
    if (r.cpu_ratio > 0) line += fmt::format(" ({:.2f}x)", r.cpu_ratio);
  }
  if (r.minor_faults) {
    line += fmt::format(", {} page faults", *r.minor_faults);
    if (const auto& base = v.baseline.minor_faults) {
      line += fmt::format(" (baseline median {:.0f})", base->median);
    }
  }
  return line;
}

// "CPU: 3834 samples; hottest after start-up (self): f 72.3 %, g 9.6 %":
// the recorded run's hottest functions, for the text and the HTML page.
std::optional<std::string> cpu_line(const analysis::DiagnoseVerdict& v) {
  if (!v.cpu || v.cpu->hottest.empty()) return std::nullopt;
  // A name the demangler cannot read (a lambda deep in libtorch's templates
  // runs to 300 characters) is cut, so that the line shows all three; the
  // JSON and `strata report` keep it whole.
  constexpr size_t kLabelColumns = 120;
  std::string hot;
  for (const auto& h : v.cpu->hottest) {
    hot +=
        (hot.empty() ? "" : ", ") +
        fmt::format("{} {:.1f} %", fit_columns(printable(h.label), kLabelColumns), 100 * h.share);
  }
  return fmt::format("CPU: {} samples; hottest{} (self): {}", v.cpu->samples,
                     v.cpu->hottest_after_startup ? " after start-up" : "", hot);
}

std::vector<std::string> startup_lines(const analysis::DiagnoseVerdict& v) {
  std::vector<std::string> lines;
  if (v.cpu && v.cpu->import_ns > 0) {
    std::string parts;
    for (const auto& [module, ns] : v.cpu->heaviest_imports) {
      parts += (parts.empty() ? "" : ", ") + fmt::format("{} {}", module, short_duration(ns));
    }
    // A cut stack has lost its import frames: the figure is then a floor.
    const std::string cut =
        v.cpu->import_cut_ns > 0
            ? fmt::format(
                  " at least ({} of samples had their stacks cut short and are not "
                  "counted)",
                  short_duration(v.cpu->import_cut_ns))
            : "";
    lines.push_back(fmt::format("Start-up: Python imports {}{}{}{}",
                                short_duration(v.cpu->import_ns), cut,
                                parts.empty() ? "" : "; heaviest: ", parts));
  }
  return lines;  // CUDA start-up is the GPU diagnosis' header line
}

std::string layer_line(const store::DiagnoseLayerRow& l) {
  return fmt::format("  {:<9} {:<8} {}{}", l.layer, l.ran ? "ran" : "skipped", printable(l.reason),
                     l.ran && l.elapsed_ns > 0 ? " (" + short_duration(l.elapsed_ns) + ")" : "");
}

std::string render_text(const analysis::DiagnoseVerdict& v, const std::string& source) {
  std::string out = "strata diagnose: " + printable(source) + "\n\n";
  out += baseline_line(v.baseline) + "\n";
  if (auto recorded = recorded_line(v)) out += *recorded + "\n";
  for (const auto& line : startup_lines(v)) out += line + "\n";
  if (v.range) {
    out += fmt::format("Range: '{}', {} instance{} spanning {}; everything below is inside it\n",
                       printable(*v.range), v.range_span->instances,
                       v.range_span->instances == 1 ? "" : "s",
                       short_duration(v.range_span->end - v.range_span->start));
  }
  if (auto cpu = cpu_line(v)) out += *cpu + "\n";
  out += "Layers:\n";
  for (const auto& l : v.layers) out += layer_line(l) + "\n";
  if (v.budget_s) out += fmt::format("  (budget {:g} s)\n", *v.budget_s);
  if (v.gpu) {
    GpuReportOptions options;
    out += "\n" + render_gpu_report(diagnosis_report(*v.gpu, source, v.shapes_known, options),
                                    Format::kTable);
  } else if (!v.findings.empty()) {
    // No GPU activity: the CPU rules' findings alone, in the same table.
    GpuReport r;
    r.table.title = " ** Diagnosis (diagnosis):";
    r.table.columns = columns(true);
    add_finding_rows(v.findings, 0, v.cpu_base_ns, source, true, r);
    out += "\n" + render_gpu_report(r, Format::kTable);
  }
  const std::string again = "strata report " + shell_quote(source);
  out += "\nVerdict: " + printable(v.verdict) + "\n";
  if (v.explained_by == "cpu" || v.explained_by == "off-cpu") {
    out += "   again:    " + printable(again) + " (the CPU profile)\n";
  } else if (v.explained_by == "kernels" && !v.findings.empty()) {
    // the finding's own "again" line says where
  } else if (v.explained_by == "kernels") {
    out += "   again:    " + printable(again + " --report kernels") + "\n";
  }
  return out;
}

std::string render_json(const analysis::DiagnoseVerdict& v, const std::string& source) {
  using json = nlohmann::ordered_json;
  json o;
  o["source"] = source;
  const auto& b = v.baseline;
  o["baseline"] = {{"runs", b.runs},
                   {"succeeded", b.succeeded},
                   {"wall_ns", summary_json(b.wall_ns)},
                   {"cpu_ns", summary_json(b.cpu_ns)},
                   {"wall_cv", b.wall_cv},
                   {"on_cpu", b.on_cpu},
                   {"minor_faults", summary_json(b.minor_faults)}};
  if (v.recorded) {
    const auto& r = *v.recorded;
    o["recorded_run"] = {{"wall_ns", r.wall_ns},
                         {"cpu_ns", r.cpu_ns},
                         {"wall_ratio", r.wall_ratio > 0 ? json(r.wall_ratio) : json(nullptr)},
                         {"cpu_ratio", r.cpu_ratio > 0 ? json(r.cpu_ratio) : json(nullptr)},
                         {"minor_faults", r.minor_faults ? json(*r.minor_faults) : json(nullptr)}};
  } else {
    o["recorded_run"] = nullptr;
  }
  json startup = json::object();
  startup["cuda_ns"] = v.gpu ? json(v.gpu->startup_ns) : json(nullptr);
  json parts = json::array();
  if (v.gpu) {
    for (const auto& p : v.gpu->startup_parts) {
      parts.push_back({{"name", p.name}, {"total_ns", p.total_ns}, {"calls", p.calls}});
    }
  }
  startup["cuda_parts"] = parts;
  startup["python_imports_ns"] = v.cpu ? json(v.cpu->import_ns) : json(nullptr);
  startup["python_imports_cut_ns"] = v.cpu ? json(v.cpu->import_cut_ns) : json(nullptr);
  json imports = json::array();
  if (v.cpu) {
    for (const auto& [module, ns] : v.cpu->heaviest_imports) {
      imports.push_back({{"module", module}, {"cumulative_ns", ns}});
    }
  }
  startup["heaviest_imports"] = imports;
  o["startup"] = startup;
  if (v.gpu) {
    const auto& i = v.gpu->idle;
    o["window"] = {{"start_ns", i.window_start},
                   {"end_ns", i.window_end},
                   {"duration_ns", i.window_ns()},
                   {"busy_ns", i.busy_ns},
                   {"gaps", i.gaps},
                   {"idle",
                    {{"sync_ns", i.idle.sync_ns},
                     {"launch_ns", i.idle.launch_ns},
                     {"other_api_ns", i.idle.other_api_ns},
                     {"host_ns", i.idle.host_ns},
                     {"queued_ns", i.idle.queued_ns},
                     {"unattributed_ns", i.idle.unattributed_ns},
                     {"first_use_ns", i.idle.first_use_ns}}}};
  } else {
    o["window"] = nullptr;
  }
  if (v.range) {
    o["range"] = {{"name", *v.range},
                  {"start_ns", v.range_span->start},
                  {"end_ns", v.range_span->end},
                  {"instances", v.range_span->instances}};
  } else {
    o["range"] = nullptr;
  }
  if (v.cpu) {
    json hot = json::array();
    for (const auto& h : v.cpu->hottest) {
      hot.push_back({{"function", h.label}, {"self_share", h.share}});
    }
    o["cpu"] = {{"samples", v.cpu->samples},
                {"hottest", hot},
                {"hottest_after_startup", v.cpu->hottest_after_startup}};
  } else {
    o["cpu"] = nullptr;
  }
  o["verdict"] = {{"explained_by", v.explained_by.empty() ? json(nullptr) : json(v.explained_by)},
                  {"text", v.verdict}};
  json findings = json::array();
  const std::string again = "strata report " + shell_quote(source) + " ";
  const int64_t window = v.gpu ? v.gpu->idle.window_ns() : 0;
  int rank = 0;
  for (const auto& f : v.findings) {
    const int64_t base = f.layer == analysis::FindingLayer::kCpu ? v.cpu_base_ns : window;
    findings.push_back({{"rank", ++rank},
                        {"rule", f.rule},
                        {"layer", analysis::finding_layer_name(f.layer)},
                        {"cause", f.cause},
                        {"evidence", f.evidence},
                        {"gain_ns", f.gain_ns},
                        {"window_share", base > 0 ? static_cast<double>(f.gain_ns) / base : 0.0},
                        {"try", f.try_this},
                        {"show_again", again + f.show_again}});
  }
  o["findings"] = findings;
  json layers = json::array();
  for (const auto& l : v.layers) {
    layers.push_back(
        {{"layer", l.layer}, {"ran", l.ran}, {"reason", l.reason}, {"elapsed_ns", l.elapsed_ns}});
  }
  o["layers"] = layers;
  o["budget_s"] = v.budget_s ? json(*v.budget_s) : json(nullptr);
  json thresholds = json::object();
  for (const auto& n : analysis::threshold_names()) thresholds[n.name] = v.thresholds.*(n.field);
  o["thresholds"] = thresholds;
  return o.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

GpuReport verdict_report(const analysis::DiagnoseVerdict& v, const std::string& source) {
  GpuReport r;
  r.table.title = " ** Diagnosis (diagnose):";
  r.table.columns = columns(false);
  r.header.push_back("Verdict: " + printable(v.verdict));
  r.header.push_back(baseline_line(v.baseline));
  if (auto recorded = recorded_line(v)) r.header.push_back(*recorded);
  for (const auto& line : startup_lines(v)) r.header.push_back(line);
  if (auto cpu = cpu_line(v)) r.header.push_back(*cpu);
  if (v.gpu) add_header(*v.gpu, r);  // the work window, idle breakdown and CUDA start-up
  for (const auto& l : v.layers) {
    r.header.push_back(
        fmt::format("Layer {}: {}, {}{}", l.layer, l.ran ? "ran" : "skipped", printable(l.reason),
                    l.ran && l.elapsed_ns > 0 ? " (" + short_duration(l.elapsed_ns) + ")" : ""));
  }
  add_finding_rows(v.findings, v.gpu ? v.gpu->idle.window_ns() : 0, v.cpu_base_ns, source, false,
                   r);
  return r;
}

std::string render_verdict(const analysis::DiagnoseVerdict& verdict, const std::string& source,
                           Format format) {
  return format == Format::kJson ? render_json(verdict, source) : render_text(verdict, source);
}

}  // namespace strata::report
