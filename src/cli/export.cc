// `strata export FILE --format NAME -o OUT`: a trace's CPU profile or GPU
// timeline as a file other viewers open; the formats are export/registry.h's
// (speedscope, folded, svg, chrome).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "analysis/cpu_profile_rows_convert.h"
#include "analysis/torch_op_profile.h"
#include "cli/cpu_flags.h"
#include "cli/verbs.h"
#include "common/atomic_file.h"
#include "common/build_info.h"
#include "common/global_id.h"
#include "common/strings.h"
#include "export/gpu_timeline.h"
#include "export/registry.h"
#include "store/cpu_profile_rows.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct ExportOptions {
  std::string file;
  std::string format;
  std::string output;
  bool force = false;
  bool full_names = false;
  bool native = false;
};

// --- the verb -----------------------------------------------------------------

// `file` is the output made at the start (nullopt for "-", stdout): written
// whole under its temporary name, then moved into place (common/atomic_file.h),
// so a full disk or a symlink at the name never costs the user a file.
int write_output(std::optional<AtomicFile>& file, const std::string& text) {
  if (!file) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  Status written = file->write(text);
  if (written) written = file->publish();
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", written.error().message.c_str());
    return kExitFailed;
  }
  std::fprintf(stderr, "strata: wrote %s\n", printable(file->path()).c_str());
  return kExitOk;
}

// Prints the export's notes and writes its text.
int finish(std::optional<AtomicFile>& file, const exporter::ExportOutput& out) {
  for (const auto& note : out.notes) {
    std::fprintf(stderr, "strata: note: %s\n", printable(note).c_str());
  }
  return write_output(file, out.text);
}

int export_timeline(const ExportOptions& opt, std::optional<AtomicFile>& file,
                    const exporter::ExportEntry& entry, const exporter::ExportContext& context,
                    const store::TraceReader& reader) {
  store::GpuLoadOptions load;
  load.timeline = true;
  auto tables = store::load_gpu_tables(reader.handle(), opt.file, load);
  if (!tables) return print_usage_error(tables.error().message);
  exporter::GpuTimeline timeline = exporter::gpu_timeline(*tables);
  auto torch = store::torch_ops_present(reader);
  if (!torch) return print_usage_error(torch.error().message);
  if (*torch) {
    auto rows = store::load_torch_op_rows(reader);
    if (!rows) return print_usage_error(rows.error().message);
    exporter::add_torch_ops(timeline, *rows);
  }
  if (timeline.empty()) {
    std::fprintf(stderr,
                 "strata: %s: no CUDA, NVTX or PyTorch trace data to export (record a GPU "
                 "timeline with strata trace)\n",
                 printable(opt.file).c_str());
    return kExitUsage;
  }
  return finish(file, entry.from_timeline(timeline, context));
}

int export_cpu_profile(const ExportOptions& opt, std::optional<AtomicFile>& file,
                       const exporter::ExportEntry& entry, const exporter::ExportContext& context,
                       const store::TraceReader& reader) {
  auto rows = store::read_cpu_profile(reader);
  if (!rows) return print_usage_error(rows.error().message);
  if (rows->has_value()) {
    analysis::Profile profile =
        shown_profile(analysis::from_rows(**rows), opt.native, opt.full_names);
    return finish(file, entry.from_profile(profile, context));
  }
  // No CPU profile: a trace of a PyTorch program exports its op tree, each
  // thread's ops as nested calls (speedscope's evented view, flame graphs).
  auto torch = store::torch_ops_present(reader);
  if (!torch) return print_usage_error(torch.error().message);
  if (!*torch) {
    std::fprintf(stderr,
                 "strata: %s: no CPU profile or PyTorch ops to export (record one with strata "
                 "cpu or strata trace)\n",
                 printable(opt.file).c_str());
    return kExitUsage;
  }
  auto ops = store::load_torch_op_rows(reader);
  if (!ops) return print_usage_error(ops.error().message);
  std::vector<analysis::OpSpan> spans;
  spans.reserve(ops->ops.size());
  for (const auto& op : ops->ops) {
    spans.push_back({static_cast<int32_t>(global_id::pid_of(op.global_tid)),
                     static_cast<int32_t>(global_id::tid_of(op.global_tid)), op.start, op.end,
                     op.name});
  }
  std::fprintf(stderr, "strata: %s has no CPU profile: exporting its PyTorch op tree\n",
               printable(opt.file).c_str());
  return finish(file, entry.from_profile(analysis::op_tree_profile(spans), context));
}

int run_export(const ExportOptions& opt) {
  const auto* entry = exporter::find_export(opt.format);
  if (entry == nullptr) {
    std::fprintf(stderr, "strata: unknown export --format '%s' (use %s)\n",
                 printable(opt.format).c_str(), exporter::export_names().c_str());
    return kExitUsage;
  }
  if (opt.output.empty()) {
    return print_usage_error("-o '': empty output file name (use -o - for standard output)");
  }
  // The output is checked, and its temporary file made, before the trace is
  // read: a directory, a missing or unwritable directory or an existing file
  // without --force is a usage error now, not after the work.
  std::optional<AtomicFile> file;
  if (opt.output != "-") {
    auto created =
        AtomicFile::create(opt.output, opt.force ? Existing::kReplace : Existing::kRefuse);
    if (!created) return print_usage_error(created.error().message);
    file.emplace(std::move(created).value());
  }
  auto reader = store::TraceReader::open(opt.file);
  if (!reader) return print_usage_error(reader.error().message);
  exporter::ExportContext context;
  context.file_name = std::filesystem::path(opt.file).filename().string();
  context.exporter = std::string("strata ") + build::kVersion;
  if (entry->input == exporter::ExportInput::kGpuTimeline) {
    return export_timeline(opt, file, *entry, context, *reader);
  }
  return export_cpu_profile(opt, file, *entry, context, *reader);
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
  sub->add_flag("--full-names", opt->full_names,
                "CPU profiles: C++ names as demangled, default template arguments and all");
  sub->add_flag("--native", opt->native,
                "CPU profiles of Python programs: the mixed stacks, interpreter frames and all "
                "(default: Python functions and the builtins they call)");
  return [opt] { return run_export(*opt); };
}

}  // namespace strata::cli
