#include "report/cpu_annotate_report.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <vector>

#include "common/strings.h"

namespace strata::report {
namespace {

// Lines of context around the sampled ones, and the most a listing prints.
constexpr int kContext = 2;
constexpr int kMaxListed = 400;

std::vector<std::string> read_source(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(printable(line));
  return lines;
}

double percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

std::string render_annotation(const analysis::Annotation& a, Format format) {
  const std::vector<std::string> source = read_source(a.file);
  auto text_of = [&](int line) -> std::string {
    return line >= 1 && static_cast<size_t>(line) <= source.size() ? source[line - 1] : "";
  };
  if (format != Format::kTable) {
    Table t;
    t.columns = {{"line", Align::kRight},
                 {"self", Align::kRight},
                 {"total", Align::kRight},
                 {"source", Align::kLeft}};
    for (const auto& l : a.lines) {
      t.rows.push_back({number_cell(l.line, 0), number_cell(l.self_ns / 1e9, 6),
                        number_cell(l.total_ns / 1e9, 6), text_cell(text_of(l.line))});
    }
    return render(t, format);
  }
  std::string out =
      fmt::format("Annotate: {}:{}({})  self {:.3f} s, total {:.3f} s ({:.1f} % of the profile)\n",
                  a.file, a.decl_line, a.function, a.self_ns / 1e9, a.total_ns / 1e9,
                  percent(a.total_ns, a.profile_ns));
  for (const auto& other : a.also_matched) {
    out += "   also matched (fewer samples): " + other + "\n";
  }
  if (source.empty()) out += "   (source not readable: " + printable(a.file) + ")\n";
  out += "\n  self %  total %    line  source\n";
  std::map<int, const analysis::AnnotatedLine*> by_line;
  for (const auto& l : a.lines) by_line[l.line] = &l;
  auto print_line = [&](int line) {
    auto it = by_line.find(line);
    if (it == by_line.end()) {
      out += fmt::format("  {:>6} {:>7} {:>7}  {}\n", "", "", line, text_of(line));
    } else {
      out += fmt::format("  {:6.1f} {:7.1f} {:>7}  {}\n", percent(it->second->self_ns, a.total_ns),
                         percent(it->second->total_ns, a.total_ns), line, text_of(line));
    }
  };
  if (source.empty()) {
    for (const auto& l : a.lines) print_line(l.line);
    return out;
  }
  // From the definition to the last sampled line, with a little context;
  // sampled lines outside that span (inlined from elsewhere) come after.
  int first = std::max(1, (a.decl_line > 0 ? a.decl_line : a.lines.front().line) - kContext);
  int last = first;
  for (const auto& l : a.lines) {
    if (l.line >= first && l.line <= static_cast<int>(source.size())) last = std::max(last, l.line);
  }
  last = std::min(static_cast<int>(source.size()), last + kContext);
  last = std::min(last, first + kMaxListed);
  for (int line = first; line <= last; ++line) print_line(line);
  bool outside = false;
  for (const auto& l : a.lines) {
    if (l.line >= first && l.line <= last) continue;
    if (!outside) out += "  ...\n";
    outside = true;
    print_line(l.line);
  }
  return out;
}

}  // namespace strata::report
