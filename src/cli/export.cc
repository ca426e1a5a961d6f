// `strata export FILE --format NAME -o OUT`: a trace's CPU profile or GPU
// timeline as a file other viewers open; the formats are export/registry.h's
// (speedscope, folded, svg, chrome).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "analysis/cpu_profile_rows_convert.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "common/strings.h"
#include "export/gpu_timeline.h"
#include "export/registry.h"
#include "store/cpu_profile_rows.h"
#include "store/gpu_tables.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct ExportOptions {
  std::string file;
  std::string format;
  std::string output;
  bool force = false;
};

// --- the verb -----------------------------------------------------------------

int write_output(const ExportOptions& opt, const std::string& text) {
  if (opt.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  std::ofstream out(opt.output, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "strata: cannot write %s\n", opt.output.c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "strata: wrote %s\n", opt.output.c_str());
  return kExitOk;
}

// Prints the export's notes and writes its text.
int finish(const ExportOptions& opt, const exporter::ExportOutput& out) {
  for (const auto& note : out.notes) std::fprintf(stderr, "strata: note: %s\n", note.c_str());
  return write_output(opt, out.text);
}

int export_timeline(const ExportOptions& opt, const exporter::ExportEntry& entry,
                    const exporter::ExportContext& context, const store::TraceReader& reader) {
  store::GpuLoadOptions load;
  load.timeline = true;
  auto tables = store::load_gpu_tables(reader.handle(), opt.file, load);
  if (!tables) return print_usage_error(tables.error().message);
  exporter::GpuTimeline timeline = exporter::gpu_timeline(*tables);
  if (timeline.empty()) {
    std::fprintf(stderr,
                 "strata: %s: no CUDA or NVTX trace data to export (record a GPU timeline with "
                 "strata trace)\n",
                 printable(opt.file).c_str());
    return kExitUsage;
  }
  return finish(opt, entry.from_timeline(timeline, context));
}

int export_cpu_profile(const ExportOptions& opt, const exporter::ExportEntry& entry,
                       const exporter::ExportContext& context, const store::TraceReader& reader) {
  auto rows = store::read_cpu_profile(reader);
  if (!rows) return print_usage_error(rows.error().message);
  if (!rows->has_value()) {
    std::fprintf(stderr, "strata: %s: no CPU profile to export (record one with strata cpu)\n",
                 opt.file.c_str());
    return kExitUsage;
  }
  return finish(opt, entry.from_profile(analysis::from_rows(**rows), context));
}

int run_export(const ExportOptions& opt) {
  const auto* entry = exporter::find_export(opt.format);
  if (entry == nullptr) {
    std::fprintf(stderr, "strata: unknown export --format '%s' (use %s)\n", opt.format.c_str(),
                 exporter::export_names().c_str());
    return kExitUsage;
  }
  std::error_code ec;
  if (!opt.force && opt.output != "-" && std::filesystem::exists(opt.output, ec)) {
    std::fprintf(stderr, "strata: %s exists; use --force to overwrite\n", opt.output.c_str());
    return kExitUsage;
  }
  auto reader = store::TraceReader::open(opt.file);
  if (!reader) return print_usage_error(reader.error().message);
  exporter::ExportContext context;
  context.file_name = std::filesystem::path(opt.file).filename().string();
  context.exporter = std::string("strata ") + build::kVersion;
  if (entry->input == exporter::ExportInput::kGpuTimeline) {
    return export_timeline(opt, *entry, context, *reader);
  }
  return export_cpu_profile(opt, *entry, context, *reader);
}

}  // namespace

VerbRunner add_export(CLI::App& app) {
  auto opt = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand(
      "export", "Write a trace's CPU profile or GPU timeline (chrome) for other viewers");
  sub->add_option("file", opt->file, "Trace file")->required();
  sub->add_option("--format", opt->format, exporter::format_flag_help())->required();
  sub->add_option("-o,--output", opt->output, "Output file ('-' for stdout)")->required();
  sub->add_flag("--force", opt->force, "Overwrite the output file if it exists");
  return [opt] { return run_export(*opt); };
}

}  // namespace strata::cli
