// The formats `strata export --format NAME` writes, registered once: name,
// one line of help, what each reads and how it runs. The `--format` help and
// its validation come from this table, so a new export is its own file, one
// line in registry.cc and its test (docs/formats.md).
//
// Contract: the table is constant; names are unique
// (tests/export/registry_test.cc).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cpu_profile.h"
#include "export/chrome_trace.h"

namespace strata::exporter {

// What an export reads from the trace.
enum class ExportInput {
  kCpuProfile,   // the strata cpu profile (strata_cpu_* tables)
  kGpuTimeline,  // nsys's CUDA/NVTX tables as a timeline (export/gpu_timeline.h)
};

// What every export may name in its output.
struct ExportContext {
  std::string file_name;  // the trace's file name, without its directory
  std::string exporter;   // e.g. "strata 0.1.0"
};

struct ExportOutput {
  std::string text;  // the file's bytes
  // What the export did with odd input, one line each, for the user to read
  // ("3 events end before they start (written with dur 0)").
  std::vector<std::string> notes;
};

struct ExportEntry {
  const char* name;
  const char* help;  // one line: what the file is and which viewer opens it
  ExportInput input;
  ExportOutput (*from_profile)(const analysis::Profile& profile,
                               const ExportContext& context) = nullptr;  // kCpuProfile
  ExportOutput (*from_timeline)(const GpuTimeline& timeline,
                                const ExportContext& context) = nullptr;  // kGpuTimeline
};

// Every format, in the order help lists them.
std::span<const ExportEntry> export_registry();

// The entry of `name`, or nullptr.
const ExportEntry* find_export(std::string_view name);

// "speedscope, folded, svg or chrome": the names for "unknown --format" messages.
std::string export_names();

// The help of `--format`: the names with what each group reads,
// "speedscope, folded, svg (CPU profile) or chrome".
std::string format_flag_help();

}  // namespace strata::exporter
