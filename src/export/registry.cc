#include "export/registry.h"

#include <fmt/format.h>

#include <array>

#include "export/flamegraph_svg.h"
#include "export/folded.h"
#include "export/pstats_file.h"
#include "export/speedscope.h"

namespace strata::exporter {
namespace {

ExportOutput speedscope(const analysis::Profile& profile, const ExportContext& context) {
  SpeedscopeOptions options;
  options.name = context.file_name;
  options.exporter = context.exporter;
  return {speedscope_json(profile, options), {}};
}

ExportOutput folded(const analysis::Profile& profile, const ExportContext&) {
  return {folded_stacks(profile, {}), {}};
}

ExportOutput svg(const analysis::Profile& profile, const ExportContext& context) {
  FlameGraphOptions options;
  options.title = "strata cpu: " + context.file_name;
  return {flamegraph_svg(profile, options), {}};
}

ExportOutput pstats(const analysis::Profile& profile, const ExportContext&) {
  return {pstats_file(profile), {}};
}

ExportOutput chrome(const GpuTimeline& timeline, const ExportContext& context) {
  ChromeTraceOptions options;
  options.source = context.file_name;
  options.exporter = context.exporter;
  auto trace = chrome_trace(timeline, options);
  ExportOutput out{std::move(trace.json), {}};
  const auto& st = trace.stats;
  if (st.unmatched_gpu_ops > 0) {
    out.notes.push_back(fmt::format("{} kernels/copies have no launching API call (no arrow)",
                                    st.unmatched_gpu_ops));
  }
  if (st.overlap_slices > 0) {
    out.notes.push_back(
        fmt::format("{} slices overlapped a neighbour partially and are on \"(overlap N)\" tracks",
                    st.overlap_slices));
  }
  if (st.negative_durations > 0) {
    out.notes.push_back(
        fmt::format("{} events end before they start (written with dur 0)", st.negative_durations));
  }
  return out;
}

using In = ExportInput;

constexpr std::array kExports = {
    ExportEntry{"speedscope", "speedscope JSON (speedscope.app)", In::kCpuProfile, speedscope},
    ExportEntry{"folded", "folded stacks (flamegraph.pl, inferno)", In::kCpuProfile, folded},
    ExportEntry{"svg", "an SVG flame graph (any browser)", In::kCpuProfile, svg},
    ExportEntry{"pstats", "cProfile's stats file (python -m pstats, snakeviz)", In::kCpuProfile,
                pstats},
    ExportEntry{"chrome", "Chrome Trace Event JSON (Perfetto UI, chrome://tracing)",
                In::kGpuTimeline, nullptr, chrome},
};

const char* input_label(ExportInput input) {
  switch (input) {
    case In::kCpuProfile:
      return "CPU profile";
    case In::kGpuTimeline:
      return "";  // "chrome" says it: a timeline
  }
  return "";
}

// "a, b, c or d", each name followed by what `suffix` gives for it.
template <class Suffix>
std::string sentence(Suffix&& suffix) {
  std::string out;
  for (size_t i = 0; i < kExports.size(); ++i) {
    if (i > 0) out += i + 1 == kExports.size() ? " or " : ", ";
    out += kExports[i].name;
    out += suffix(i);
  }
  return out;
}

}  // namespace

std::span<const ExportEntry> export_registry() {
  return kExports;
}

const ExportEntry* find_export(std::string_view name) {
  for (const auto& e : kExports) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

std::string export_names() {
  return sentence([](size_t) { return std::string(); });
}

std::string format_flag_help() {
  // The input is said once per run of formats that read it.
  return sentence([](size_t i) {
    bool last_of_group = i + 1 == kExports.size() || kExports[i + 1].input != kExports[i].input;
    std::string label = input_label(kExports[i].input);
    return last_of_group && !label.empty() ? " (" + label + ")" : std::string();
  });
}

}  // namespace strata::exporter
