#include "report/bench_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace strata::report {
namespace {

// Milliseconds and MiB read well with 3 decimals; metrics keep what the
// program printed, so they get up to 3 too.
constexpr int kDecimals = 3;

// A quantity no run recorded (page faults in an older trace) gets no row.
bool recorded_by_none(const analysis::BenchSummary& s, size_t q) {
  if (!s.quantities[q].left_out_when_absent) return false;
  return std::none_of(s.commands.begin(), s.commands.end(),
                      [&](const auto& cmd) { return cmd.values[q].has_value(); });
}

std::string termination(const analysis::Failure& f) {
  if (f.signal) {
    const char* abbrev = sigabbrev_np(*f.signal);
    return fmt::format("killed by signal {}{}", *f.signal,
                       abbrev ? fmt::format(" (SIG{})", abbrev) : std::string());
  }
  return fmt::format("exited with status {}", f.exit_status.value_or(0));
}

}  // namespace

int bench_decimals(std::string_view unit) {
  return unit == "count" ? 0 : kDecimals;
}

Table bench_values_table(const analysis::BenchSummary& s) {
  Table t;
  t.columns = {{"Cmd", Align::kLeft},   {"Quantity", Align::kLeft}, {"Unit", Align::kLeft},
               {"Runs", Align::kRight}, {"Min", Align::kRight},     {"Median", Align::kRight},
               {"Max", Align::kRight}};
  for (const auto& cmd : s.commands) {
    for (size_t q = 0; q < s.quantities.size(); ++q) {
      if (recorded_by_none(s, q)) continue;
      const auto& v = cmd.values[q];
      const int decimals = bench_decimals(s.quantities[q].unit);
      std::vector<Cell> row = {text_cell(cmd.label), text_cell(s.quantities[q].name),
                               text_cell(s.quantities[q].unit)};
      if (v) {
        row.push_back(number_cell(static_cast<double>(v->count), 0));
        row.push_back(number_cell(v->min, decimals));
        row.push_back(number_cell(v->median, decimals));
        row.push_back(number_cell(v->max, decimals));
      } else {
        row.push_back(number_cell(0, 0));
        for (int i = 0; i < 3; ++i) row.push_back(text_cell("-"));
      }
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

Table bench_ratio_table(const analysis::BenchSummary& s) {
  Table t;
  t.columns = {{"Quantity", Align::kLeft},
               {"Pairs", Align::kRight},
               {"Median", Align::kRight},
               {"Min", Align::kRight},
               {"Max", Align::kRight}};
  for (size_t q = 0; q < s.ratios.size(); ++q) {
    if (recorded_by_none(s, q)) continue;
    const auto& r = s.ratios[q];
    std::vector<Cell> row = {text_cell(s.quantities[q].name)};
    if (r) {
      row.push_back(number_cell(static_cast<double>(r->pairs), 0));
      for (double v : {r->median, r->min, r->max}) {
        Cell c = number_cell(v, kDecimals);
        c.text += "x";
        row.push_back(std::move(c));
      }
    } else {
      row.push_back(number_cell(0, 0));
      for (int i = 0; i < 3; ++i) row.push_back(text_cell("-"));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string render_bench(const analysis::BenchSummary& s, const BenchReportContext& ctx,
                         Format format) {
  Table values = bench_values_table(s);
  Table ratios = bench_ratio_table(s);
  if (format == Format::kJson) {
    nlohmann::ordered_json doc;
    doc["runs"] = ctx.runs;
    doc["warmups"] = ctx.warmups;
    doc["commands"] = nlohmann::ordered_json::array();
    for (const auto& c : s.commands) {
      doc["commands"].push_back({{"label", c.label},
                                 {"command", c.command},
                                 {"measured", c.measured},
                                 {"succeeded", c.succeeded}});
    }
    doc["values"] = nlohmann::ordered_json::parse(render(values, Format::kJson));
    doc["ratios"] = nlohmann::ordered_json::parse(render(ratios, Format::kJson));
    doc["failures"] = nlohmann::ordered_json::array();
    for (const auto& f : s.failures) {
      doc["failures"].push_back({{"label", f.label},
                                 {"iteration", f.iteration},
                                 {"warmup", f.warmup},
                                 {"termination", termination(f)}});
    }
    doc["missing_metrics"] = nlohmann::ordered_json::array();
    for (const auto& m : s.missing_metrics) {
      doc["missing_metrics"].push_back(
          {{"label", m.label}, {"iteration", m.iteration}, {"key", m.key}});
    }
    return escape_json_del(
               doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) +
           "\n";
  }
  if (format == Format::kCsv) {
    std::string out = render(values, Format::kCsv);
    if (!s.ratios.empty()) out += "\n" + render(ratios, Format::kCsv);
    return out;
  }

  std::string out;
  bool vs = s.commands.size() == 2;
  out += fmt::format("strata bench: {} measured run{} of {} after {} warm-up{}{}\n", ctx.runs,
                     ctx.runs == 1 ? "" : "s", vs ? "each command" : "the command", ctx.warmups,
                     ctx.warmups == 1 ? "" : "s", vs ? ", interleaved A B A B ..." : "");
  for (const auto& c : s.commands) {
    out += fmt::format("  {}: {}\n", printable(c.label), printable(join_command(c.command)));
  }
  out += "\n" + render(values, Format::kTable);
  if (vs) {
    out += "\nA/B ratio per pair (A / B; above 1 means B is faster)\n\n";
    out += render(ratios, Format::kTable);
  }
  if (!s.failures.empty()) {
    out += "\nFailed runs (left out of the statistics):\n";
    for (const auto& f : s.failures) {
      out += fmt::format("  {} {} {}: {}\n", printable(f.label), f.warmup ? "warm-up" : "run",
                         f.iteration + 1, termination(f));
    }
  }
  if (!s.missing_metrics.empty()) {
    out += "\nMetrics not printed:\n";
    for (const auto& m : s.missing_metrics) {
      out += fmt::format("  {} run {}: no {}=VALUE on stdout\n", printable(m.label),
                         m.iteration + 1, printable(m.key));
    }
  }
  return out;
}

}  // namespace strata::report
