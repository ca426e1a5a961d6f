#include "report/cpu_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace strata::report {
namespace {

using analysis::CpuRow;
using analysis::ProfileMode;

// pstats prints seconds with 3 decimals (f8 = "%8.3f").
constexpr int kSeconds = 3;
constexpr int kPercent = 1;

Cell seconds(double s) {
  return number_cell(s, kSeconds);
}

Cell optional_seconds(const std::optional<double>& s) {
  return s ? seconds(*s) : text_cell("");  // pstats leaves the cell blank
}

// pstats' "total/primitive" when recursion made them differ.
Cell ncalls_cell(const CpuRow& r, bool sampled) {
  Cell c = number_cell(static_cast<double>(r.ncalls), 0);
  if (!sampled && r.ncalls != r.primitive_calls) {
    c.text = fmt::format("{}/{}", r.ncalls, r.primitive_calls);
  }
  return c;
}

nlohmann::ordered_json idle_by(const analysis::IdleSummary& idle) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const analysis::IdleShare& share : idle.by_what) {
    out.push_back({{"what", share.what}, {"samples", share.samples}, {"time_s", share.time_s}});
  }
  return out;
}

}  // namespace

std::string fit_pstats_label(const std::string& label, size_t columns) {
  // Called for every row of a column that must narrow: every label loses its
  // directories, not only the long ones, so that one table never shows a
  // file with its path in one row and without it in the next.
  // "file:line(function)": the file ends at the ':' before the line's digits.
  const size_t paren = label.find('(');
  const size_t colon = paren == std::string::npos ? std::string::npos : label.rfind(':', paren);
  const size_t slash = colon == std::string::npos ? std::string::npos : label.rfind('/', colon);
  if (slash == std::string::npos) return fit_columns(label, columns);
  return fit_columns(label.substr(slash + 1), columns);
}

Table cpu_functions_table(const analysis::CpuTable& t, Format format) {
  bool sampled = analysis::is_sampled(t.mode);
  bool text = format == Format::kTable;
  Table out;
  if (t.options.per_thread) out.columns.push_back({"tid", Align::kRight});
  out.columns.push_back({"ncalls", Align::kRight});
  if (!text) out.columns.push_back({sampled ? "samples" : "pcalls", Align::kRight});
  out.columns.push_back({"tottime", Align::kRight});
  out.columns.push_back({text ? "percall" : "tottime_percall", Align::kRight});
  out.columns.push_back({"cumtime", Align::kRight});
  out.columns.push_back({text ? "percall" : "cumtime_percall", Align::kRight});
  out.columns.push_back({"filename:lineno(function)", Align::kLeft, fit_pstats_label});
  for (const CpuRow& r : t.rows) {
    std::vector<Cell> row;
    if (t.options.per_thread) row.push_back(number_cell(r.tid, 0));
    if (text) {
      row.push_back(ncalls_cell(r, sampled));
    } else {
      row.push_back(number_cell(static_cast<double>(r.ncalls), 0));
      row.push_back(
          number_cell(static_cast<double>(sampled ? r.cum_samples : r.primitive_calls), 0));
    }
    row.push_back(seconds(r.tottime_s));
    row.push_back(optional_seconds(r.tottime_percall_s));
    row.push_back(seconds(r.cumtime_s));
    row.push_back(optional_seconds(r.cumtime_percall_s));
    row.push_back(text_cell(r.label));
    out.rows.push_back(std::move(row));
  }
  return out;
}

Table cpu_threads_table(const std::vector<analysis::CpuThreadRow>& threads, ProfileMode mode) {
  bool sampled = analysis::is_sampled(mode);
  Table out;
  out.columns = {{"TID", Align::kRight},
                 {"PID", Align::kRight},
                 {sampled ? "Samples" : "Calls", Align::kRight},
                 {"Share (%)", Align::kRight},
                 {"Time (s)", Align::kRight},
                 {"Thread", Align::kLeft}};
  // Sampled: how much of each thread's time was idle-spinning, and in what
  // (analysis/idle_frames.h); the thread's time above includes it.
  if (sampled) {
    out.columns.insert(out.columns.end() - 1, {{"Idle (s)", Align::kRight}, {"Idle in", Align::kLeft}});
  }
  for (const auto& t : threads) {
    std::vector<Cell> row = {number_cell(t.tid, 0), number_cell(t.pid, 0),
                             number_cell(static_cast<double>(sampled ? t.samples : t.calls), 0),
                             number_cell(t.share * 100, kPercent), seconds(t.time_s)};
    if (sampled) {
      row.push_back(seconds(t.idle_s));
      row.push_back(text_cell(t.idle_what));
    }
    row.push_back(text_cell(t.name));
    out.rows.push_back(std::move(row));
  }
  return out;
}

Table cpu_shares_table(const std::vector<analysis::SelfShare>& shares, ProfileMode mode) {
  bool sampled = analysis::is_sampled(mode);
  Table out;
  out.columns.push_back({"Share (%)", Align::kRight});
  if (sampled) out.columns.push_back({"Self samples", Align::kRight});
  out.columns.push_back({"Self (s)", Align::kRight});
  out.columns.push_back({"filename:lineno(function)", Align::kLeft, fit_pstats_label});
  for (const auto& s : shares) {
    std::vector<Cell> row = {number_cell(s.share * 100, kPercent)};
    if (sampled) row.push_back(number_cell(static_cast<double>(s.self_samples), 0));
    row.push_back(seconds(s.self_s));
    row.push_back(text_cell(s.label));
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::string cpu_header_text(const analysis::CpuHeader& h, const analysis::CpuTable& t) {
  std::string out;
  if (analysis::is_sampled(h.mode)) {
    out += fmt::format("         {} in {:.3f} seconds ({} sampling at {:g} Hz)\n",
                       plural(h.samples, "sample", "samples"), h.profiled_s,
                       analysis::mode_name(h.mode), h.rate_hz);
    // The effective rate: samples per second of the target's CPU time. It
    // is below the rate asked when the kernel could not keep up (periods it
    // skipped, throttling, lost records) or the target spent its time in the
    // kernel, which is not sampled. The shortfall is named when it is more
    // than 10 %, and more than the jitter of a short run (3 standard
    // deviations of a count of `expected` periods), so that a profile
    // thinner than asked does not pass for the rate on the line above.
    std::string rate;
    if (h.effective_rate_hz > 0 && h.rate_hz > 0) {
      const double effective = h.effective_rate_hz;
      const double expected = h.cpu_s * h.rate_hz;
      const double shortfall = expected - static_cast<double>(h.samples);
      rate = fmt::format(", effective rate {:.0f} Hz of CPU time", effective);
      if (effective < 0.9 * h.rate_hz && shortfall > 3 * std::sqrt(expected)) {
        rate += fmt::format(" ({:.0f} % below the {:g} Hz asked)",
                            100 * (1 - effective / h.rate_hz), h.rate_hz);
      }
    }
    out += fmt::format("   {} lost, {}{}\n", h.lost_samples,
                       plural(h.throttles, "throttle", "throttles"), rate);
  } else {
    // pstats: "2851294 function calls (2851117 primitive calls) in 1.121 seconds".
    std::string primitive = h.primitive_calls == h.function_calls
                                ? std::string()
                                : fmt::format(" ({} primitive calls)", h.primitive_calls);
    out += fmt::format("         {} function calls{} in {:.3f} seconds (instrumented)\n",
                       h.function_calls, primitive, h.profiled_s);
    if (h.instrument_overhead_ns_per_call > 0) {
      // The profile module's calibration, stated as Python's docs state it.
      out += fmt::format("   calibrated: the instrumentation's own {:.1f} ns per call (measured "
                         "at start) is subtracted from every time\n",
                         h.instrument_overhead_ns_per_call);
    } else {
      out += "   not calibrated: times include the instrumentation's own cost per call\n";
    }
  }
  out += fmt::format("   wall {:.3f} s, CPU {:.3f} s, {}, {}\n", h.wall_s, h.cpu_s,
                     plural(h.threads, "thread", "threads"),
                     plural(h.processes, "process", "processes"));
  if (h.idle.samples > 0) {
    std::string where;
    for (const analysis::IdleShare& share : h.idle.by_what) {
      where += fmt::format("{}{} {:.3f} s", where.empty() ? "" : ", ", share.what, share.time_s);
    }
    out += fmt::format("   idle-spinning threads: {} ({:.3f} s, {:.1f} % of the time): {}\n",
                       plural(h.idle.samples, "sample", "samples"), h.idle.time_s,
                       h.idle.share * 100, where);
    out += h.idle_shown ? "   idle samples are listed in the table (--idle)\n"
                        : "   idle samples are left out of the table; --idle lists them\n";
  }
  if (h.frames_closed_at_end > 0) {
    out += fmt::format(
        "   {} still open at the end (thread running at exit or crash): closed at "
        "the last timestamp\n",
        plural(h.frames_closed_at_end, "call", "calls"));
  }
  if (h.frames_closed_by_outer_exit > 0) {
    out += fmt::format("   {} without an exit event, closed by an enclosing call's exit\n",
                       plural(h.frames_closed_by_outer_exit, "call", "calls"));
  }
  if (h.unmatched_exits > 0) {
    out += fmt::format("   {} without a matching enter, dropped\n",
                       plural(h.unmatched_exits, "exit event", "exit events"));
  }
  if (h.reordered_times > 0) {
    out += fmt::format("   {} earlier than the previous one, raised to it\n",
                       plural(h.reordered_times, "timestamp", "timestamps"));
  }
  if (analysis::is_sampled(h.mode)) {
    out += "   sampled: ncalls = leaf samples, times = samples x period, percall per sample\n";
  }
  out += fmt::format("\n   Ordered by: {}\n", analysis::sort_description(t.options.sort));
  if (!t.options.filter.empty()) {
    out += fmt::format("   List reduced from {} to {} due to restriction <'{}'>\n", t.total_rows,
                       t.filtered_rows, printable(t.options.filter));
  }
  if (t.options.limit > 0 && t.filtered_rows > t.options.limit) {
    out += fmt::format("   List reduced from {} to {} due to restriction <{}>\n", t.filtered_rows,
                       t.rows.size(), t.options.limit);
  }
  return out + "\n";
}

std::string render_cpu_profile(const analysis::CpuHeader& h, const analysis::CpuTable& t,
                               const std::vector<analysis::CpuThreadRow>& threads, Format format) {
  Table functions = cpu_functions_table(t, format);
  Table thread_table = cpu_threads_table(threads, h.mode);
  if (format == Format::kJson) {
    nlohmann::ordered_json doc;
    doc["header"] = {{"mode", analysis::mode_name(h.mode)},
                     {"rate_hz", h.rate_hz},
                     {"effective_rate_hz", h.effective_rate_hz},
                     {"samples", h.samples},
                     {"lost_samples", h.lost_samples},
                     {"throttles", h.throttles},
                     {"wall_s", h.wall_s},
                     {"cpu_s", h.cpu_s},
                     {"profiled_s", h.profiled_s},
                     {"threads", h.threads},
                     {"processes", h.processes},
                     {"function_calls", h.function_calls},
                     {"primitive_calls", h.primitive_calls},
                     {"instrument_overhead_ns_per_call", h.instrument_overhead_ns_per_call},
                     {"frames_closed_at_end", h.frames_closed_at_end},
                     {"frames_closed_by_outer_exit", h.frames_closed_by_outer_exit},
                     {"unmatched_exits", h.unmatched_exits},
                     {"reordered_times", h.reordered_times},
                     {"idle_samples", h.idle.samples},
                     {"idle_s", h.idle.time_s},
                     {"idle_share", h.idle.share},
                     {"idle_shown", h.idle_shown},
                     {"idle_by", idle_by(h.idle)},
                     {"sort", analysis::sort_description(t.options.sort)},
                     {"total_functions", t.total_rows},
                     {"listed_functions", t.rows.size()}};
    doc["functions"] = nlohmann::ordered_json::parse(render(functions, Format::kJson));
    if (!threads.empty()) {
      doc["threads"] = nlohmann::ordered_json::parse(render(thread_table, Format::kJson));
    }
    return escape_json_del(
               doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) +
           "\n";
  }
  if (format == Format::kCsv) {
    std::string out = render(functions, Format::kCsv);
    if (!threads.empty()) out += "\n" + render(thread_table, Format::kCsv);
    return out;
  }
  std::string out = cpu_header_text(h, t) + render(functions, Format::kTable);
  if (!threads.empty()) out += "\nThreads\n\n" + render(thread_table, Format::kTable);
  return out;
}

}  // namespace strata::report
