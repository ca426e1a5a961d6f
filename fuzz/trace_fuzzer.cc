// The trace readers (src/store) on arbitrary bytes written to a file: a
// trace or nsys export is opened with store::TraceReader, then everything
// `strata report`, `strata export` and `strata info` load from it goes
// through: the run, table counts, counters, export metadata, bench runs,
// the CPU profile, profiled launches and kernels seen, the rank rows, and
// the GPU tables under each load option, each fed on to the reports and
// exports built from it, strata compare's comparison of what it holds, and
// strata diagnose's verdict as `strata report --report diagnosis` builds it.
// Errors are fine (a damaged file is a one-line error); crashes and
// sanitizer findings are not.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "analysis/compare.h"
#include "analysis/diagnose_thresholds.h"
#include "analysis/diagnose_verdict.h"
#include "analysis/cpu_profile_rows_convert.h"
#include "analysis/cpu_pstats.h"
#include "analysis/kernel_profile.h"
#include "analysis/multi_rank.h"
#include "analysis/rank_input.h"
#include "analysis/recorded_bench.h"
#include "export/gpu_timeline.h"
#include "export/registry.h"
#include "fuzz_files.h"
#include "report/bench_report.h"
#include "report/compare_report.h"
#include "report/cpu_report.h"
#include "report/diagnosis_report.h"
#include "report/kernel_report.h"
#include "report/registry.h"
#include "store/cpu_profile_rows.h"
#include "store/diagnose_rows.h"
#include "store/gpu_tables.h"
#include "store/kernel_metric_rows.h"
#include "store/rank_rows.h"
#include "store/trace_db.h"

namespace {

using namespace strata;

void reports_and_exports(const store::TraceReader& reader) {
  (void)reader.run();
  (void)reader.tables();
  (void)reader.counters();
  (void)reader.export_metadata();
  (void)reader.kernels();
  (void)store::cuda_data_present(reader);
  (void)store::kernel_profiles_present(reader);

  if (auto runs = reader.bench_runs(); runs && !runs->empty()) {
    auto bench = analysis::summarize_recorded_bench(*runs);
    (void)report::render_bench(bench.summary, {bench.measured, bench.warmups},
                               report::Format::kJson);
  }
  if (auto rows = store::read_cpu_profile(reader); rows && rows->has_value()) {
    analysis::Profile profile = analysis::from_rows(**rows);
    analysis::CpuTableOptions options;
    options.per_thread = true;
    if (auto table = analysis::cpu_function_table(profile, options)) {
      (void)report::render_cpu_profile(analysis::cpu_header(profile), *table,
                                       analysis::cpu_threads(profile), report::Format::kTable);
    }
    exporter::ExportContext context{"fuzz.sqlite", "strata fuzz"};
    for (const auto& entry : exporter::export_registry()) {
      if (entry.input == exporter::ExportInput::kCpuProfile)
        (void)entry.from_profile(profile, context);
    }
  }
  if (auto launches = store::read_profiled_launches(reader)) {
    auto profiles = analysis::analyze_profiled_launches(*launches);
    (void)report::render_kernel_profiles(profiles, report::all_kernel_sections(),
                                         report::Format::kTable);
  }
  (void)store::read_kernels_seen(reader);

  // Each kernel-name kind and the timeline's extra columns load differently.
  for (auto names : {store::KernelNameKind::kDemangled, store::KernelNameKind::kBase,
                     store::KernelNameKind::kMangled}) {
    store::GpuLoadOptions load;
    load.kernel_names = names;
    load.kernel_links = names == store::KernelNameKind::kDemangled;
    load.timeline = names == store::KernelNameKind::kMangled;
    auto tables = store::load_gpu_tables(reader.handle(), reader.path(), load);
    if (!tables) continue;
    if (load.timeline) {
      exporter::GpuTimeline timeline = exporter::gpu_timeline(*tables);
      exporter::ExportContext context{"fuzz.sqlite", "strata fuzz"};
      for (const auto& entry : exporter::export_registry()) {
        if (entry.input == exporter::ExportInput::kGpuTimeline && !timeline.empty()) {
          (void)entry.from_timeline(timeline, context);
        }
      }
      // The reports that read the timeline's columns (the diagnosis).
      for (const auto& entry : report::report_registry()) {
        if (entry.input == report::ReportInput::kGpuTables && entry.timeline) {
          (void)report::render_gpu_report(entry.from_tables(*tables, reader.path(), {}),
                                          report::Format::kTable);
        }
      }
      continue;
    }
    report::GpuReportOptions options;
    for (const auto& entry : report::report_registry()) {
      if (entry.input != report::ReportInput::kGpuTables) continue;
      (void)report::render_gpu_report(entry.from_tables(*tables, reader.path(), options),
                                      report::Format::kTable);
    }
  }
}

// strata compare: the file's two bench commands against each other, and
// everything it holds against itself.
void compared(const store::TraceReader& reader) {
  analysis::CompareSide side;
  side.name = "fuzz.sqlite";
  if (auto runs = reader.bench_runs(); runs && !runs->empty()) {
    side.wall_source = "bench";
    side.wall = analysis::bench_samples(*runs, "A");
    analysis::CompareSide b = side;
    b.wall = analysis::bench_samples(*runs, "B");
    (void)report::render_comparison(side, b, analysis::compare_sides(side, b),
                                    report::Format::kTable);
  }
  if (auto rows = store::read_cpu_profile(reader); rows && rows->has_value()) {
    side.cpu = analysis::from_rows(**rows);
  }
  if (auto tables = store::load_gpu_tables(reader.handle(), reader.path())) {
    side.gpu = std::move(tables).value();
  }
  (void)report::render_comparison(side, side, analysis::compare_sides(side, side),
                                  report::Format::kJson);
}

// strata diagnose's verdict from what the file holds (cli/diagnose_print.cc's
// loading, with the stored settings and a --range over whatever it names).
void diagnosed(const store::TraceReader& reader) {
  auto record = store::read_diagnose_record(reader);
  if (!record) return;
  analysis::VerdictInput in;
  in.layers = record->layers;
  for (const auto& [name, value] : record->settings) {
    if (name == "range") {
      in.range = value;
    } else {
      (void)analysis::set_threshold(in.thresholds, name, value);
    }
  }
  if (auto runs = reader.bench_runs()) in.bench = std::move(runs).value();
  if (auto rows = store::read_cpu_profile(reader); rows && rows->has_value()) {
    in.cpu = analysis::from_rows(**rows);
  }
  store::GpuLoadOptions load;
  load.timeline = true;
  if (auto tables = store::load_gpu_tables(reader.handle(), reader.path(), load)) {
    in.gpu = std::move(tables).value();
  }
  for (int pass = 0; pass < 2; ++pass) {
    if (auto verdict = analysis::build_verdict(in)) {
      (void)report::render_verdict(*verdict, reader.path(), report::Format::kTable);
      (void)report::render_verdict(*verdict, reader.path(), report::Format::kJson);
    }
    in.range = "fuzz";  // and once restricted to a range (found or not)
  }
}

void ranks(const std::string& path) {
  auto file = store::load_rank_file(path);
  if (!file) return;
  std::vector<analysis::RankInput> inputs;
  inputs.push_back(analysis::rank_input(std::move(file).value()));
  auto result = analysis::analyze_ranks(inputs);
  for (const auto& entry : report::report_registry()) {
    if (entry.input != report::ReportInput::kRanks) continue;
    (void)report::render_gpu_report(entry.from_ranks({result, inputs, 0}), report::Format::kCsv);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input("trace.sqlite", data, size);
  if (auto reader = store::TraceReader::open(path)) {
    reports_and_exports(*reader);
    compared(*reader);
    diagnosed(*reader);
  }
  ranks(path);
  return 0;
}
