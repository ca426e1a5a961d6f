// `strata export FILE --format speedscope|folded|svg -o OUT`: the CPU
// profile of a trace as a file other viewers open (speedscope, FlameGraph
// tools, any browser for the SVG).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/cpu_profile_rows_convert.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "export/flamegraph_svg.h"
#include "export/folded.h"
#include "export/speedscope.h"
#include "store/cpu_profile_rows.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct ExportOptions {
  std::string file;
  std::string format;
  std::string output;
  bool force = false;
};

int run_export(const ExportOptions& opt) {
  if (opt.format != "speedscope" && opt.format != "folded" && opt.format != "svg") {
    std::fprintf(stderr, "strata: unknown export --format '%s' (use speedscope, folded or svg)\n",
                 opt.format.c_str());
    return kExitUsage;
  }
  std::error_code ec;
  if (!opt.force && opt.output != "-" && std::filesystem::exists(opt.output, ec)) {
    std::fprintf(stderr, "strata: %s exists; use --force to overwrite\n", opt.output.c_str());
    return kExitUsage;
  }
  auto reader = store::TraceReader::open(opt.file);
  if (!reader) {
    std::fprintf(stderr, "strata: %s\n", reader.error().message.c_str());
    return kExitUsage;
  }
  auto rows = store::read_cpu_profile(*reader);
  if (!rows) {
    std::fprintf(stderr, "strata: %s\n", rows.error().message.c_str());
    return kExitUsage;
  }
  if (!rows->has_value()) {
    std::fprintf(stderr, "strata: %s: no CPU profile to export (record one with strata cpu)\n",
                 opt.file.c_str());
    return kExitUsage;
  }
  analysis::Profile profile = from_rows(**rows);
  std::string text;
  if (opt.format == "speedscope") {
    exporter::SpeedscopeOptions so;
    so.name = std::filesystem::path(opt.file).filename().string();
    so.exporter = std::string("strata ") + build::kVersion;
    text = exporter::speedscope_json(profile, so);
  } else if (opt.format == "folded") {
    text = exporter::folded_stacks(profile, {});
  } else {
    exporter::FlameGraphOptions fo;
    fo.title = "strata cpu: " + std::filesystem::path(opt.file).filename().string();
    text = exporter::flamegraph_svg(profile, fo);
  }
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

}  // namespace

VerbRunner add_export(CLI::App& app) {
  auto opt = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand("export", "Write a trace's CPU profile for other viewers");
  sub->add_option("file", opt->file, "Trace file")->required();
  sub->add_option("--format", opt->format, "speedscope, folded or svg")->required();
  sub->add_option("-o,--output", opt->output, "Output file ('-' for stdout)")->required();
  sub->add_flag("--force", opt->force, "Overwrite the output file if it exists");
  return [opt] { return run_export(*opt); };
}

}  // namespace strata::cli
