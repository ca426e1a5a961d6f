// `strata export FILE --format speedscope|folded|svg|chrome -o OUT`: the CPU
// profile of a trace as a file other viewers open (speedscope, FlameGraph
// tools, any browser for the SVG), or with chrome its GPU timeline as Chrome
// Trace Event JSON for Perfetto UI and chrome://tracing.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/chrome_timeline.h"
#include "cli/cpu_profile_rows_convert.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "common/strings.h"
#include "export/chrome_trace.h"
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

int export_chrome(const ExportOptions& opt, const store::TraceReader& reader) {
  auto timeline = load_gpu_timeline(reader.handle(), opt.file);
  if (!timeline) {
    std::fprintf(stderr, "strata: %s\n", timeline.error().message.c_str());
    return kExitUsage;
  }
  if (timeline->empty()) {
    std::fprintf(stderr,
                 "strata: %s: no CUDA or NVTX trace data to export (record a GPU timeline with "
                 "strata trace)\n",
                 printable(opt.file).c_str());
    return kExitUsage;
  }
  exporter::ChromeTraceOptions co;
  co.source = std::filesystem::path(opt.file).filename().string();
  co.exporter = std::string("strata ") + build::kVersion;
  auto trace = exporter::chrome_trace(*timeline, co);
  const auto& st = trace.stats;
  if (st.unmatched_gpu_ops > 0) {
    std::fprintf(stderr, "strata: note: %zu kernels/copies have no launching API call (no arrow)\n",
                 st.unmatched_gpu_ops);
  }
  if (st.overlap_slices > 0) {
    std::fprintf(stderr,
                 "strata: note: %zu slices overlapped a neighbour partially and are on "
                 "\"(overlap N)\" tracks\n",
                 st.overlap_slices);
  }
  if (st.negative_durations > 0) {
    std::fprintf(stderr, "strata: note: %zu events end before they start (written with dur 0)\n",
                 st.negative_durations);
  }
  return write_output(opt, trace.json);
}

int export_cpu_profile(const ExportOptions& opt, const store::TraceReader& reader) {
  auto rows = store::read_cpu_profile(reader);
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
  return write_output(opt, text);
}

int run_export(const ExportOptions& opt) {
  if (opt.format != "speedscope" && opt.format != "folded" && opt.format != "svg" &&
      opt.format != "chrome") {
    std::fprintf(stderr,
                 "strata: unknown export --format '%s' (use speedscope, folded, svg or chrome)\n",
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
  return opt.format == "chrome" ? export_chrome(opt, *reader) : export_cpu_profile(opt, *reader);
}

}  // namespace

VerbRunner add_export(CLI::App& app) {
  auto opt = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand(
      "export", "Write a trace's CPU profile or GPU timeline (chrome) for other viewers");
  sub->add_option("file", opt->file, "Trace file")->required();
  sub->add_option("--format", opt->format, "speedscope, folded, svg (CPU profile) or chrome")
      ->required();
  sub->add_option("-o,--output", opt->output, "Output file ('-' for stdout)")->required();
  sub->add_flag("--force", opt->force, "Overwrite the output file if it exists");
  return [opt] { return run_export(*opt); };
}

}  // namespace strata::cli
