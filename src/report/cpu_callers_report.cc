#include "report/cpu_callers_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "common/strings.h"
#include "report/cpu_report.h"

namespace strata::report {
namespace {

using analysis::CpuEdge;
using analysis::Function;

// The function at the other end of an edge, and the edge.
using Link = std::pair<uint32_t, const CpuEdge*>;

// Per listed function, its callers or callees in pstats' order: by
// (file, line, name) of the other function.
std::map<uint32_t, std::vector<Link>> links_by_function(const analysis::CpuTable& t,
                                                        const std::vector<CpuEdge>& edges,
                                                        CallView view) {
  std::map<uint32_t, std::vector<Link>> out;
  for (const CpuEdge& e : edges) {
    if (view == CallView::kCallers) {
      out[e.callee].push_back({e.caller, &e});
    } else {
      out[e.caller].push_back({e.callee, &e});
    }
  }
  auto key = [&](uint32_t f) {
    const Function& fn = t.functions[f];
    return std::tie(fn.file_or_module(), fn.line, fn.name);
  };
  for (auto& [f, links] : out) {
    std::sort(links.begin(), links.end(),
              [&](const Link& a, const Link& b) { return key(a.first) < key(b.first); });
  }
  return out;
}

// pstats' "%d/%d" when recursion made the counts differ.
std::string calls_text(const CpuEdge& e) {
  return e.ncalls == e.primitive_calls ? fmt::format("{}", e.ncalls)
                                       : fmt::format("{}/{}", e.ncalls, e.primitive_calls);
}

std::string render_text(const analysis::CpuHeader& h, const analysis::CpuTable& t,
                        const std::map<uint32_t, std::vector<Link>>& links, CallView view) {
  // pstats' get_print_list: the widest listed name, plus 2. On a terminal
  // (text_width()), the listed names get at most half of what the numbers
  // leave and the other end's names the rest, each cut to fit.
  constexpr size_t kNumbers = 3 + 7 + 1 + 8 + 1 + 8 + 2;  // "<- " ncalls tottime cumtime
  size_t name_room = 0;                                   // 0: no limit
  size_t other_room = 0;
  if (size_t limit = text_width(); limit > 0) {
    const size_t free = limit > kNumbers ? limit - kNumbers : 0;
    name_room = std::max(free / 2 > 2 ? free / 2 - 2 : 0, kMinNameColumns);
    other_room = std::max(free > name_room + 2 ? free - name_room - 2 : 0, kMinNameColumns);
  }
  auto name_of = [&](const std::string& label, size_t room) {
    std::string text = printable(label);
    return room == 0 ? text : fit_pstats_label(text, room);
  };
  size_t width = 0;
  for (const auto& r : t.rows)
    width = std::max(width, display_columns(name_of(r.label, name_room)));
  width += 2;
  // Padded by columns on screen: a cut name's "…" is three bytes, one column.
  auto padded = [&](const std::string& text) {
    return text + std::string(width - std::min(width, display_columns(text)), ' ');
  };
  const bool callers = view == CallView::kCallers;
  std::string out = cpu_header_text(h, t);
  out += padded("Function ") + (callers ? "was called by...\n" : "called...\n");
  out += fmt::format("{:<{}}    ncalls  tottime  cumtime\n", "", width);
  for (const auto& r : t.rows) {
    out += padded(name_of(r.label, name_room)) + (callers ? "<- " : "-> ");
    auto it = links.find(r.function);
    if (it == links.end()) {
      out += "\n";
      continue;
    }
    // The first edge follows the arrow; the others line up under it.
    bool first = true;
    for (const auto& [other, e] : it->second) {
      if (!first) out += std::string(width + 1, ' ');
      out += fmt::format("{:>{}} {:8.3f} {:8.3f}  {}\n", calls_text(*e), first ? 7 : 9,
                         e->tottime_s, e->cumtime_s, name_of(t.functions[other].label, other_room));
      first = false;
    }
  }
  return out;
}

Table edge_table(const analysis::CpuTable& t, const std::map<uint32_t, std::vector<Link>>& links,
                 CallView view) {
  Table out;
  out.columns = {
      {"function", Align::kLeft}, {view == CallView::kCallers ? "caller" : "callee", Align::kLeft},
      {"ncalls", Align::kRight},  {"pcalls", Align::kRight},
      {"tottime", Align::kRight}, {"cumtime", Align::kRight}};
  for (const auto& r : t.rows) {
    auto it = links.find(r.function);
    if (it == links.end()) continue;
    for (const auto& [other, e] : it->second) {
      out.rows.push_back({text_cell(r.label), text_cell(t.functions[other].label),
                          number_cell(static_cast<double>(e->ncalls), 0),
                          number_cell(static_cast<double>(e->primitive_calls), 0),
                          number_cell(e->tottime_s, 3), number_cell(e->cumtime_s, 3)});
    }
  }
  return out;
}

}  // namespace

std::string render_cpu_calls(const analysis::CpuHeader& header, const analysis::CpuTable& table,
                             const std::vector<CpuEdge>& edges, CallView view, Format format) {
  auto links = links_by_function(table, edges, view);
  if (format == Format::kTable) return render_text(header, table, links, view);
  return render(edge_table(table, links, view), format);
}

}  // namespace strata::report
