#include "report/python_imports_report.h"

#include <fmt/format.h>

namespace strata::report {
namespace {

double us(int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}

}  // namespace

std::string render_python_imports(const analysis::ImportTable& imports, size_t limit,
                                  Format format) {
  const size_t shown = limit == 0 ? imports.rows.size() : std::min(limit, imports.rows.size());
  if (format != Format::kTable) {
    Table t;
    t.columns = {{"module", Align::kLeft},   {"depth", Align::kRight},
                 {"self_us", Align::kRight}, {"cumulative_us", Align::kRight},
                 {"samples", Align::kRight}, {"file", Align::kLeft}};
    for (size_t i = 0; i < shown; ++i) {
      const auto& r = imports.rows[i];
      t.rows.push_back({text_cell(r.module), number_cell(r.depth, 0), number_cell(us(r.self_ns), 0),
                        number_cell(us(r.cumulative_ns), 0),
                        number_cell(static_cast<double>(r.samples), 0), text_cell(r.file)});
    }
    return render(t, format);
  }
  std::string out;
  if (imports.rows.empty()) {
    return "No imports sampled: no <module> frame under importlib's _find_and_load (a Python "
           "3.12+ program profiled with perf maps shows them).\n";
  }
  const double share =
      imports.total_ns > 0 ? 100.0 * static_cast<double>(imports.import_ns) / imports.total_ns : 0;
  out += fmt::format("   imports: {:.3f} s of {:.3f} s sampled ({:.1f} %), {} modules\n",
                     imports.import_ns / 1e9, imports.total_ns / 1e9, share, imports.rows.size());
  if (imports.cut_samples > 0) {
    out += fmt::format(
        "   {} samples ({:.3f} s) left out: their stacks were cut short (the stack copy or the "
        "frame limit), so their outer imports are unknown (--stack-size 65528 keeps more)\n",
        imports.cut_samples, imports.cut_ns / 1e9);
  }
  if (shown < imports.rows.size()) {
    out += fmt::format("   List reduced from {} to {} due to restriction <{}>\n",
                       imports.rows.size(), shown, limit);
  }
  out += "\nimport time: self [us] | cumulative | imported package\n";
  for (size_t i = 0; i < shown; ++i) {
    const auto& r = imports.rows[i];
    out += fmt::format("import time: {:>9.0f} | {:>10.0f} | {}{}\n", us(r.self_ns),
                       us(r.cumulative_ns), std::string(2 * r.depth, ' '), r.module);
  }
  return out;
}

}  // namespace strata::report
