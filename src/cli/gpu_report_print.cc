#include "cli/gpu_report_print.h"

#include <cstdio>

#include "cli/verbs.h"
#include "report/gpu_reports.h"
#include "report/registry.h"
#include "store/gpu_tables.h"

namespace strata::cli {

int print_gpu_reports(const store::TraceReader& reader, const std::vector<std::string>& names,
                      report::Format format) {
  std::vector<const report::ReportEntry*> entries;
  for (const auto& name : names) {
    const auto* entry = report::find_report(name, report::ReportInput::kGpuTables);
    if (entry == nullptr) {
      std::fprintf(stderr, "strata: unknown --report '%s' (known: %s)\n", name.c_str(),
                   report::known_reports(report::ReportInput::kGpuTables).c_str());
      return kExitUsage;
    }
    entries.push_back(entry);
  }
  auto tables = store::load_gpu_tables(reader.handle(), reader.path());
  if (!tables) return print_usage_error(tables.error().message);
  report::GpuReportOptions options;
  options.format = format;
  bool first = true;
  for (const auto* entry : entries) {
    report::GpuReport r = entry->from_tables(*tables, reader.path(), options);
    if (!first) std::fputs("\n", stdout);
    first = false;
    std::fputs(report::render_gpu_report(r, format).c_str(), stdout);
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace strata::cli
