#include "cli/report_html.h"

#include <cstdio>
#include <filesystem>

#include "analysis/cpu_profile_rows_convert.h"
#include "analysis/cpu_pstats.h"
#include "analysis/cpu_tree.h"
#include "analysis/kernel_profile.h"
#include "analysis/python_view.h"
#include "analysis/torch_op_table.h"
#include "cli/diagnose_print.h"
#include "cli/verbs.h"
#include "common/atomic_file.h"
#include "common/build_info.h"
#include "common/strings.h"
#include "export/gpu_timeline.h"
#include "html/flame_data.h"
#include "html/page.h"
#include "html/timeline_lod.h"
#include "report/compare_report.h"
#include "report/cpu_report.h"
#include "report/diagnosis_report.h"
#include "report/kernel_report.h"
#include "report/registry.h"
#include "store/cpu_profile_rows.h"
#include "store/gpu_tables.h"
#include "store/kernel_metric_rows.h"
#include "store/torch_op_rows.h"

namespace strata::cli {
namespace {

// The CPU function table keeps its heaviest rows: the page filters and
// sorts them, a million-function profile would not fit a light file.
constexpr size_t kCpuRows = 2000;

std::string count(size_t n) {
  return std::to_string(n);
}

// The GPU layers: summary lines, diagnosis (unless the trace's diagnose
// verdict takes its place: add_verdict), the registry's tables, timeline.
Status add_gpu(const store::TraceReader& reader, const std::string& file, bool with_diagnosis,
               html::PageInput& page) {
  STRATA_ASSIGN_OR_RETURN(bool cuda, store::cuda_data_present(reader));
  STRATA_ASSIGN_OR_RETURN(bool torch, store::torch_ops_present(reader));
  if (!cuda && !torch) return Ok{};
  store::GpuLoadOptions load;
  load.timeline = true;
  STRATA_ASSIGN_OR_RETURN(auto tables, store::load_gpu_tables(reader.handle(), file, load));
  report::GpuReportOptions text;  // table format: the diagnosis' header lines come with it
  report::GpuReportOptions json;
  json.format = report::Format::kJson;
  if (cuda && with_diagnosis) {
    report::GpuReport diagnosis = report::diagnosis_report_of(tables, file, text);
    report::GpuReport columns = report::diagnosis_report_of(tables, file, json);
    diagnosis.table = std::move(columns.table);  // every field a column: the page shows them all
    page.diagnosis = std::move(diagnosis);
  }
  // The op table: torch.profiler's of a PyTorch trace, else the registry's.
  if (torch) {
    STRATA_ASSIGN_OR_RETURN(auto rows, store::load_torch_op_rows(reader));
    analysis::TorchOpTableOptions options;
    options.limit = 0;
    STRATA_ASSIGN_OR_RETURN(auto table, analysis::torch_op_table(rows, options));
    page.tables.push_back({"op_sum", "Ops", report::torch_op_sum_report(table, json)});
  }
  struct Tab {
    const char* id;
    const char* label;
  };
  static constexpr Tab kTabs[] = {
      {"op_sum", "Ops (NVTX)"},
      {"cuda_gpu_kern_sum", "Kernels"},
      {"cuda_api_sum", "CUDA API"},
      {"cuda_gpu_mem_time_sum", "Memcpy time"},
      {"cuda_gpu_mem_size_sum", "Memcpy size"},
      {"cuda_kern_exec_sum", "Launch \u2192 kernel"},
      {"nvtx_sum", "NVTX ranges"},
  };
  if (cuda) {
    for (const auto& tab : kTabs) {
      if (torch && std::string_view(tab.id) == "op_sum") continue;
      const auto* entry = report::find_report(tab.id, report::ReportInput::kGpuTables);
      if (entry == nullptr) continue;
      page.tables.push_back({tab.id, tab.label, entry->from_tables(tables, file, json)});
    }
  }
  exporter::GpuTimeline timeline = exporter::gpu_timeline(tables);
  if (torch) {
    STRATA_ASSIGN_OR_RETURN(auto rows, store::load_torch_op_rows(reader));
    exporter::add_torch_ops(timeline, rows);
  }
  size_t kernels = 0, copies = 0;
  for (const auto& op : timeline.gpu_ops) {
    (op.kind == exporter::GpuOpKind::kKernel ? kernels : copies) += 1;
  }
  page.summary.push_back({"Kernels", count(kernels)});
  page.summary.push_back({"Memcpys and memsets", count(copies)});
  page.summary.push_back({"CUDA API calls", count(timeline.api_calls.size())});
  page.summary.push_back({"NVTX ranges", count(timeline.nvtx_ranges.size())});
  if (torch) page.summary.push_back({"PyTorch ops", count(timeline.torch_ops.size())});
  if (!timeline.empty()) {
    page.timeline = html::timeline_lod(timeline);
    const int64_t span = page.timeline["span"].get<int64_t>();
    page.summary.insert(page.summary.begin(), {"Timeline span", analysis::short_duration(span)});
    const size_t kept = page.timeline["kept"].get<size_t>();
    const size_t events = page.timeline["events"].get<size_t>();
    if (kept < events) {
      page.notes.push_back("The timeline keeps " + count(kept) + " of " + count(events) +
                           " events one by one and draws the busiest tracks as bins; the full "
                           "trace is in " +
                           file + ".");
    }
  }
  return Ok{};
}

// The CPU layer: the pstats table and the flame graphs (Python view and mixed).
Status add_cpu(const store::TraceReader& reader, const CpuReportFlags& flags,
               html::PageInput& page) {
  STRATA_ASSIGN_OR_RETURN(auto rows, store::read_cpu_profile(reader));
  if (!rows) return Ok{};
  const analysis::Profile recorded = analysis::from_rows(*rows);
  const analysis::Profile viewed = shown_profile(recorded, false, flags.full_names);
  analysis::CpuTableOptions options;
  options.sort = {analysis::CpuSort::kTottime};
  options.limit = kCpuRows;
  STRATA_ASSIGN_OR_RETURN(auto table, analysis::cpu_function_table(viewed, options));
  report::GpuReport cpu;
  cpu.table = report::cpu_functions_table(table, report::Format::kJson);
  if (table.total_rows > table.rows.size()) {
    cpu.notes.push_back("The " + count(table.rows.size()) +
                        " functions with the most own time of " + count(table.total_rows) +
                        " (strata report --limit 0 lists them all).");
  }
  page.tables.insert(page.tables.begin(), {"cpu", "CPU functions", std::move(cpu)});
  const analysis::CpuHeader header = analysis::cpu_header(recorded);
  if (analysis::is_sampled(recorded.mode)) {
    page.summary.push_back({"CPU samples", count(header.samples)});
  }
  if (header.wall_s > 0) {
    page.summary.insert(
        page.summary.begin(),
        {"Wall time", analysis::short_duration(static_cast<int64_t>(header.wall_s * 1e9))});
  }
  analysis::CallTreeOptions tree;
  nlohmann::json flame = nlohmann::json::object();
  const analysis::Profile mixed = shown_profile(recorded, true, flags.full_names);
  if (auto python = analysis::python_view(recorded)) {
    const analysis::Profile shown = shown_profile(recorded, false, flags.full_names);
    flame["python"] = html::flame_data(analysis::build_call_tree(shown, tree));
  }
  flame["mixed"] = html::flame_data(analysis::build_call_tree(mixed, tree));
  page.flame = std::move(flame);
  return Ok{};
}

Status add_kernels(const store::TraceReader& reader, html::PageInput& page) {
  STRATA_ASSIGN_OR_RETURN(bool present, store::kernel_profiles_present(reader));
  if (!present) return Ok{};
  STRATA_ASSIGN_OR_RETURN(auto launches, store::read_profiled_launches(reader));
  auto profiles = analysis::analyze_profiled_launches(launches);
  if (profiles.empty()) return Ok{};
  page.kernel_sections = report::render_kernel_profiles(profiles, report::all_kernel_sections(),
                                                        report::Format::kTable);
  page.summary.push_back({"Profiled kernel launches", count(profiles.size())});
  return Ok{};
}

// A trace strata diagnose wrote: its whole verdict (the CPU, off-CPU,
// timeline and kernel findings, the baseline and the layer log) in place of
// the GPU timeline's diagnosis alone.
void add_verdict(const store::TraceReader& reader, const std::string& file, html::PageInput& page) {
  // A verdict that cannot be built (a stored --range naming nothing, a
  // damaged setting) leaves the rest of the page; the note says why.
  auto verdict = load_verdict(reader);
  if (!verdict) {
    page.notes.push_back("No diagnose verdict: " + verdict.error().message);
    return;
  }
  page.diagnosis = report::verdict_report(*verdict, file);
}

int write_page(const html::PageInput& page, const std::string& output,
               Existing existing = Existing::kReplace) {
  const std::string text = html::render_page(page);
  if (output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return kExitOk;
  }
  if (Status s = write_file_atomically(output, text, existing); !s.ok()) {
    return print_usage_error(s.error().message);
  }
  std::fprintf(stderr, "strata: wrote %s (%zu bytes)\n", printable(output).c_str(), text.size());
  return kExitOk;
}

}  // namespace

int write_html_rank_report(const std::vector<std::string>& files,
                           const analysis::MultiRankResult& result,
                           std::span<const analysis::RankInput> inputs, const std::string& output) {
  html::PageInput page;
  page.title = std::to_string(files.size()) + " ranks";
  page.generator = std::string("strata ") + build::kVersion;
  for (size_t i = 0; i < files.size(); ++i) {
    page.summary.push_back({"File " + std::to_string(i + 1), files[i]});
  }
  for (const auto& name : report::report_names(report::ReportInput::kRanks)) {
    const auto* entry = report::find_report(name, report::ReportInput::kRanks);
    page.tables.push_back({name, name, entry->from_ranks({result, inputs, 0})});
  }
  page.notes = result.warnings;
  page.notes.push_back(
      "Each rank's timeline, tables and flame graph: strata report FILE --format html.");
  return write_page(page, output);
}

int write_html_compare_report(const analysis::CompareSide& a, const analysis::CompareSide& b,
                              const analysis::Comparison& comparison, const std::string& output) {
  html::PageInput page;
  page.title = a.name + " vs " + b.name;
  page.generator = std::string("strata ") + build::kVersion;
  page.summary = {{"A (base)", a.name}, {"B (new)", b.name}};
  page.notes.push_back(report::verdict_sentence(comparison.verdict));
  if (comparison.wall) {
    report::GpuReport wall;
    wall.table = report::compare_wall_table(*comparison.wall);
    page.tables.push_back({"wall", "Wall time", std::move(wall)});
  }
  for (const auto& section : comparison.sections) {
    report::GpuReport r;
    r.table = report::compare_section_table(section);
    const std::string key(analysis::section_key(section.kind));
    page.tables.push_back({key, r.table.title.empty() ? key : r.table.title, std::move(r)});
  }
  for (const auto& [kind, a_side] : comparison.one_sided) {
    page.notes.push_back(std::string(analysis::section_key(kind)) + ": only " +
                         (a_side ? a.name : b.name) + " holds this layer");
  }
  return write_page(page, output);
}

int write_html_report(const store::TraceReader& reader, const std::string& file,
                      const std::string& output, const CpuReportFlags& flags, Existing existing) {
  html::PageInput page;
  page.title = std::filesystem::path(file).filename().string();
  page.generator = std::string("strata ") + build::kVersion;
  auto diagnosed = is_diagnose_trace(reader);
  if (!diagnosed) return print_usage_error(diagnosed.error().message);
  if (Status s = add_gpu(reader, file, !*diagnosed, page); !s.ok()) {
    return print_usage_error(s.error().message);
  }
  if (Status s = add_cpu(reader, flags, page); !s.ok()) return print_usage_error(s.error().message);
  if (Status s = add_kernels(reader, page); !s.ok()) return print_usage_error(s.error().message);
  if (*diagnosed) add_verdict(reader, file, page);
  if (page.tables.empty() && page.timeline.is_null() && page.flame.is_null() &&
      page.kernel_sections.empty()) {
    page.notes.push_back("This trace holds no CUDA, CPU or kernel data to show.");
  }
  page.summary.insert(page.summary.begin(), {"Trace", file});
  return write_page(page, output, existing);
}

std::string page_beside(const std::string& trace) {
  std::filesystem::path page(trace);
  if (page.extension() == ".html") return trace + ".html";  // never the trace itself
  page.replace_extension(".html");
  return page.string();
}

}  // namespace strata::cli
