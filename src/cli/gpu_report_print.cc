#include "cli/gpu_report_print.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "analysis/torch_op_table.h"
#include "cli/verbs.h"
#include "common/atomic_file.h"
#include "common/strings.h"
#include "report/gpu_reports.h"
#include "report/registry.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"

namespace strata::cli {

int load_gpu_reports(const store::TraceReader& reader, const std::vector<std::string>& names,
                     GpuReportInput& out) {
  for (const auto& name : names) {
    const auto* entry = report::find_report(name, report::ReportInput::kGpuTables);
    if (entry == nullptr) {
      std::fprintf(stderr, "strata: unknown --report '%s' (known: %s)\n", printable(name).c_str(),
                   report::known_reports(report::ReportInput::kGpuTables).c_str());
      return kExitUsage;
    }
    out.entries.push_back(entry);
  }
  store::GpuLoadOptions load;
  for (const auto* entry : out.entries) load.timeline = load.timeline || entry->timeline;
  auto tables = store::load_gpu_tables(reader.handle(), reader.path(), load);
  if (!tables) return print_usage_error(tables.error().message);
  out.tables = std::move(tables).value();
  return kExitOk;
}

void add_gpu_reports(const store::TraceReader& reader, const GpuReportInput& input,
                     report::ReportDocument& document) {
  report::GpuReportOptions options;
  options.format = document.format();
  for (const auto* entry : input.entries) {
    report::GpuReport r = entry->from_tables(input.tables, reader.path(), options);
    document.add(entry->name, r.table.title, report::render_gpu_report(r, document.format()));
  }
}

std::optional<report::GpuReport> torch_op_report(const store::TraceReader& reader,
                                                 const std::string& file, const TorchOpFlags& flags,
                                                 report::Format format, int* status) {
  *status = kExitOk;
  analysis::TorchOpTableOptions options;
  if (!flags.sort.empty()) {
    auto sort = analysis::parse_torch_sort(flags.sort);
    if (!sort) {
      *status = print_usage_error(sort.error().message);
      return std::nullopt;
    }
    options.sort = *sort;
  }
  options.limit = flags.limit ? static_cast<size_t>(std::max<int64_t>(*flags.limit, 0)) : 100;
  options.group_by_shape = flags.group_by_shape;
  options.group_by_stack = flags.group_by_stack;
  auto rows = store::load_torch_op_rows(reader);
  if (!rows) {
    *status = print_usage_error(rows.error().message);
    return std::nullopt;
  }
  auto table = analysis::torch_op_table(*rows, options);
  if (!table) {
    *status = print_usage_error(printable(file) + ": " + table.error().message);
    return std::nullopt;
  }
  report::GpuReportOptions ro;
  ro.format = format;
  return report::torch_op_sum_report(*table, ro);
}

void add_torch_op_report(const report::GpuReport& table, report::ReportDocument& document) {
  document.add("op_sum", table.table.title, report::render_gpu_report(table, document.format()));
  if (document.format() != report::Format::kTable) {
    for (const auto& note : table.notes) std::fprintf(stderr, "strata: %s\n", note.c_str());
  }
}

int emit_document(const report::ReportDocument& document, const DocumentOutput& output) {
  if (output.csv_dir.empty()) {
    std::string text = document.render();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return kExitOk;
  }
  // DIR is made when missing (one level, as nsys stats makes its outputs).
  if (::mkdir(output.csv_dir.c_str(), 0777) != 0 && errno != EEXIST) {
    return print_usage_error("cannot create directory '" + printable(output.csv_dir) +
                             "': " + std::strerror(errno));
  }
  // Every file is checked before any is written: "exists" leaves none new.
  const Existing existing = output.force ? Existing::kReplace : Existing::kRefuse;
  auto files = document.csv_files(output.base);
  std::vector<AtomicFile> pending;
  for (const auto& [name, text] : files) {
    auto file = AtomicFile::create(output.csv_dir + "/" + name, existing);
    if (!file) return print_usage_error(file.error().message);
    if (auto st = file->write(text); !st) return print_usage_error(st.error().message);
    pending.push_back(std::move(file).value());
  }
  for (auto& file : pending) {
    if (auto st = file.publish(); !st) return print_usage_error(st.error().message);
    std::fprintf(stderr, "strata: wrote %s\n", printable(file.path()).c_str());
  }
  return kExitOk;
}

}  // namespace strata::cli
