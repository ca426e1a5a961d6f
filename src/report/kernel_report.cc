#include "report/kernel_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "report/kernel_sections.h"

namespace strata::report {
namespace {

using analysis::KernelProfile;
using analysis::KernelSection;

// One printed value: its row {section, name, unit, value} and ncu's raw name.
struct Printed {
  std::vector<Cell> row;
  std::string metric;
};

struct PrintedSection {
  KernelSection id;
  std::vector<Printed> values;
  std::vector<analysis::KernelFinding> findings;
};

// ncu scales time to the unit that keeps the value at 1 or more.
std::pair<double, const char*> scaled_time(double ns) {
  if (ns >= 1e9) return {ns / 1e9, "s"};
  if (ns >= 1e6) return {ns / 1e6, "ms"};
  if (ns >= 1e3) return {ns / 1e3, "us"};
  return {ns, "ns"};
}

std::pair<double, const char*> scaled_frequency(double hz) {
  if (hz >= 1e9) return {hz / 1e9, "Ghz"};
  if (hz >= 1e6) return {hz / 1e6, "Mhz"};
  if (hz >= 1e3) return {hz / 1e3, "Khz"};
  return {hz, "hz"};
}

enum class Kind { kTime, kFrequency, kCycles, kPercent };

struct Spec {
  const char* name;
  const char* metric;
  Kind kind;
};

// ncu 2025's row order in SpeedOfLight and WorkloadDistribution.
constexpr Spec kSol[] = {
    {"DRAM Frequency", "dram__cycles_elapsed.avg.per_second", Kind::kFrequency},
    {"SM Frequency", "gpc__cycles_elapsed.avg.per_second", Kind::kFrequency},
    {"Elapsed Cycles", "gpc__cycles_elapsed.max", Kind::kCycles},
    {"Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
     Kind::kPercent},
    {"DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", Kind::kPercent},
    {"Duration", "gpu__time_duration.sum", Kind::kTime},
    {"L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active",
     Kind::kPercent},
    {"L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed", Kind::kPercent},
    {"SM Active Cycles", "sm__cycles_active.avg", Kind::kCycles},
    {"Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed", Kind::kPercent},
};
constexpr Spec kWorkload[] = {
    {"Average DRAM Active Cycles", "dram__cycles_active.avg", Kind::kCycles},
    {"Total DRAM Elapsed Cycles", "dram__cycles_elapsed.sum", Kind::kCycles},
    {"Average L1 Active Cycles", "l1tex__cycles_active.avg", Kind::kCycles},
    {"Total L1 Elapsed Cycles", "l1tex__cycles_elapsed.sum", Kind::kCycles},
    {"Average L2 Active Cycles", "lts__cycles_active.avg", Kind::kCycles},
    {"Total L2 Elapsed Cycles", "lts__cycles_elapsed.sum", Kind::kCycles},
    {"Average SM Active Cycles", "sm__cycles_active.avg", Kind::kCycles},
    {"Total SM Elapsed Cycles", "sm__cycles_elapsed.sum", Kind::kCycles},
    {"Average SMSP Active Cycles", "smsp__cycles_active.avg", Kind::kCycles},
    {"Total SMSP Elapsed Cycles", "smsp__cycles_elapsed.sum", Kind::kCycles},
};

template <size_t N>
std::vector<Printed> measured_values(const KernelProfile& p, KernelSection section,
                                     const Spec (&specs)[N]) {
  std::vector<Printed> out;
  std::string section_text = section_name(section);
  for (const Spec& spec : specs) {
    auto raw = p.metric(spec.metric);
    if (!raw || !std::isfinite(*raw)) continue;
    double value = *raw;
    std::string unit;
    switch (spec.kind) {
      case Kind::kTime: {
        auto [v, u] = scaled_time(value);
        value = v, unit = u;
        break;
      }
      case Kind::kFrequency: {
        auto [v, u] = scaled_frequency(value);
        value = v, unit = u;
        break;
      }
      case Kind::kCycles:
        unit = "cycle";
        break;
      case Kind::kPercent:
        unit = "%";
        break;
    }
    out.push_back(
        {{text_cell(section_text), text_cell(spec.name), text_cell(unit), ncu_value_cell(value)},
         spec.metric});
  }
  return out;
}

// The unit ncu gives a raw metric, from its name: what --metrics values
// print with (the sections' values have theirs in kSol and kWorkload).
std::pair<double, std::string> raw_metric_unit(const std::string& metric, double value) {
  auto has = [&](const char* part) { return metric.find(part) != std::string::npos; };
  if (has(".pct")) return {value, "%"};
  if (has(".per_second")) {
    auto [v, u] = scaled_frequency(value);
    return {v, u};
  }
  if (has("time_duration")) {
    auto [v, u] = scaled_time(value);
    return {v, u};
  }
  if (has(".ratio") || has(".per_")) return {value, ""};
  if (has("cycles")) return {value, "cycle"};
  if (has("sectors")) return {value, "sector"};
  if (has("bytes")) return {value, "byte"};
  if (has("inst")) return {value, "inst"};
  if (has("warps")) return {value, "warp"};
  return {value, ""};
}

// The values no section prints: the --metrics ones (the agent writes no
// other counters), by name as std::map orders them.
std::vector<Printed> command_line_values(const KernelProfile& p) {
  auto in_sections = [](const std::string& metric) {
    for (const Spec& spec : kSol) {
      if (metric == spec.metric) return true;
    }
    for (const Spec& spec : kWorkload) {
      if (metric == spec.metric) return true;
    }
    // Launch Statistics and Occupancy (kernel_sections.h) and the agent's
    // device and launch facts.
    return metric.rfind("launch__", 0) == 0 || metric.rfind("device__attribute_", 0) == 0 ||
           metric == "sm__warps_active.avg.pct_of_peak_sustained_active" ||
           metric == "sm__warps_active.avg.per_cycle_active";
  };
  std::vector<Printed> out;
  const std::string section = section_name(KernelSection::kCommandLineMetrics);
  for (const auto& [metric, raw] : p.metrics) {
    if (in_sections(metric) || !std::isfinite(raw)) continue;
    auto [value, unit] = raw_metric_unit(metric, raw);
    out.push_back(
        {{text_cell(section), text_cell(metric), text_cell(unit), ncu_value_cell(value)}, metric});
  }
  return out;
}

std::vector<PrintedSection> printed_sections(const KernelProfile& p,
                                             const KernelSectionSet& chosen) {
  std::vector<PrintedSection> out;
  auto findings_of = [&](KernelSection s) {
    std::vector<analysis::KernelFinding> f;
    for (const auto& finding : p.findings) {
      if (finding.section == s) f.push_back(finding);
    }
    return f;
  };
  if (chosen.count(KernelSection::kSpeedOfLight)) {
    PrintedSection s{KernelSection::kSpeedOfLight,
                     measured_values(p, KernelSection::kSpeedOfLight, kSol),
                     findings_of(KernelSection::kSpeedOfLight)};
    if (!s.values.empty()) out.push_back(std::move(s));
  }
  if (chosen.count(KernelSection::kWorkload)) {
    PrintedSection s{
        KernelSection::kWorkload, measured_values(p, KernelSection::kWorkload, kWorkload), {}};
    if (!s.values.empty()) out.push_back(std::move(s));
  }
  if (p.occupancy && p.device && p.kernel) {
    KernelSectionsReport rep = kernel_sections(*p.device, *p.kernel, *p.occupancy, {});
    for (KernelSection id : {KernelSection::kLaunchStatistics, KernelSection::kOccupancy}) {
      if (!chosen.count(id)) continue;
      PrintedSection s{id, {}, findings_of(id)};
      std::string name = section_name(id);
      for (size_t i = 0; i < rep.metrics.rows.size(); ++i) {
        if (rep.metrics.rows[i][0].text == name) {
          s.values.push_back({rep.metrics.rows[i], rep.metric_ids[i]});
        }
      }
      if (!s.values.empty()) out.push_back(std::move(s));
    }
  }
  // Printed whatever --section chose, as ncu prints --metrics values.
  PrintedSection extra{KernelSection::kCommandLineMetrics, command_line_values(p), {}};
  if (!extra.values.empty()) out.push_back(std::move(extra));
  return out;
}

std::string dims_text(const std::array<int64_t, 3>& d) {
  if (d[0] == 0) return "(?, ?, ?)";
  return fmt::format("({}, {}, {})", d[0], std::max<int64_t>(d[1], 1), std::max<int64_t>(d[2], 1));
}

// The agent writes ~0 (stored as -1) when its name table was full and it
// could not count the kernel's launches (docs/kernels-interface.md).
std::string invocation_text(int64_t invocation) {
  return invocation >= 0 ? std::to_string(invocation) : "?";
}

std::string cc_text(const KernelProfile& p) {
  if (!p.device) return "";
  return fmt::format("{}.{}", p.device->cc_major, p.device->cc_minor);
}

// The number as printed, for JSON: what a reader of the table sees.
double printed_number(const Cell& cell) {
  std::string digits;
  for (char c : cell.text) {
    if (c != ',') digits += c;
  }
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  return end != digits.c_str() ? v : cell.number.value_or(0);
}

std::string render_table(const std::vector<KernelProfile>& profiles,
                         const KernelSectionSet& chosen) {
  std::string out;
  for (const KernelProfile& p : profiles) {
    out += profile_header_line(p);
    if (std::string reason = profile_status_line(p); !reason.empty()) {
      out += "    " + reason + "\n";
    }
    if (!p.occupancy && !p.occupancy_error.empty() &&
        (chosen.count(KernelSection::kLaunchStatistics) ||
         chosen.count(KernelSection::kOccupancy))) {
      out += "    Launch Statistics and Occupancy not computed: " + printable(p.occupancy_error) +
             "\n";
    }
    for (const PrintedSection& s : printed_sections(p, chosen)) {
      std::vector<const std::vector<Cell>*> rows;
      for (const Printed& v : s.values) rows.push_back(&v.row);
      out += render_section(section_name(s.id), rows);
      out += "\n";
      for (const auto& f : s.findings) {
        out += render_finding(f);
        out += "\n";
      }
    }
  }
  return out;
}

std::string render_csv(const std::vector<KernelProfile>& profiles, const KernelSectionSet& chosen) {
  Table t;
  for (const char* c :
       {"ID", "Process ID", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device",
        "CC", "Invocation", "Section Name", "Metric Name", "Metric Unit", "Metric Value"}) {
    t.columns.push_back({c, Align::kLeft});
  }
  for (size_t id = 0; id < profiles.size(); ++id) {
    const KernelProfile& p = profiles[id];
    std::vector<Cell> lead = {
        text_cell(std::to_string(id)),
        text_cell(std::to_string(p.launch.pid)),
        text_cell(p.demangled),
        text_cell(p.context_id ? std::to_string(*p.context_id) : ""),
        text_cell(p.stream_id ? std::to_string(*p.stream_id) : ""),
        text_cell(dims_text(p.block)),
        text_cell(dims_text(p.grid)),
        text_cell(std::to_string(p.launch.device)),
        text_cell(cc_text(p)),
        text_cell(invocation_text(p.launch.invocation)),
    };
    for (const PrintedSection& s : printed_sections(p, chosen)) {
      for (const Printed& v : s.values) {
        std::vector<Cell> row = lead;
        row.insert(row.end(), v.row.begin(), v.row.end());
        t.rows.push_back(std::move(row));
      }
    }
  }
  // ncu --csv quotes every field; so does this, doubling quotes inside, with
  // control bytes escaped as \xNN as in every CSV strata prints.
  auto quoted = [](const std::string& text) {
    std::string out = "\"";
    for (char c : printable(text)) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + quoted(t.columns[c].name);
  out += "\n";
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + quoted(row[c].text);
    out += "\n";
  }
  return out;
}

std::string render_json(const std::vector<KernelProfile>& profiles,
                        const KernelSectionSet& chosen) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelProfile& p : profiles) {
    nlohmann::ordered_json k;
    k["kernel"] = p.demangled;
    k["mangled"] = p.launch.kernel_name;
    if (p.launch.invocation >= 0) {
      k["invocation"] = p.launch.invocation;
    } else {
      k["invocation"] = nullptr;  // unknown: the agent's name table was full
    }
    k["device"] = p.launch.device;
    k["cc"] = cc_text(p);
    k["grid"] = {p.grid[0], p.grid[1], p.grid[2]};
    k["block"] = {p.block[0], p.block[1], p.block[2]};
    k["status"] = p.launch.status;
    if (p.launch.status != 0) k["reason"] = profile_status_line(p);
    nlohmann::ordered_json sections = nlohmann::ordered_json::array();
    for (const PrintedSection& s : printed_sections(p, chosen)) {
      nlohmann::ordered_json sj;
      sj["name"] = section_name(s.id);
      nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
      for (const Printed& v : s.values) {
        metrics.push_back({{"name", v.row[1].text},
                           {"metric", v.metric},
                           {"unit", v.row[2].text},
                           {"value", printed_number(v.row[3])}});
      }
      sj["metrics"] = std::move(metrics);
      nlohmann::ordered_json guidance = nlohmann::ordered_json::array();
      for (const auto& f : s.findings) {
        guidance.push_back({{"rule", finding_rule_id(f.kind)}, {"text", finding_message(f)}});
      }
      sj["guidance"] = std::move(guidance);
      sections.push_back(std::move(sj));
    }
    k["sections"] = std::move(sections);
    kernels.push_back(std::move(k));
  }
  nlohmann::ordered_json root;
  root["kernels"] = std::move(kernels);
  // Kernel names need not be UTF-8; replace rather than throw.
  return escape_json_del(root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)) + "\n";
}

}  // namespace

KernelSectionSet all_kernel_sections() {
  return {KernelSection::kSpeedOfLight, KernelSection::kWorkload, KernelSection::kLaunchStatistics,
          KernelSection::kOccupancy};
}

Result<KernelSectionSet> parse_kernel_sections(const std::string& list) {
  KernelSectionSet out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (name == "sol") {
      out.insert(KernelSection::kSpeedOfLight);
    } else if (name == "workload") {
      out.insert(KernelSection::kWorkload);
    } else if (name == "launch") {
      out.insert(KernelSection::kLaunchStatistics);
    } else if (name == "occupancy") {
      out.insert(KernelSection::kOccupancy);
    } else {
      return make_error("--section '" + name +
                        "': unknown section (use sol, workload, launch, occupancy)");
    }
  }
  return out;
}

std::string profile_header_line(const KernelProfile& p) {
  std::string line =
      fmt::format("  {} {}x{}", printable(p.demangled), dims_text(p.grid), dims_text(p.block));
  if (p.context_id) line += fmt::format(", Context {}", *p.context_id);
  if (p.stream_id) line += fmt::format(", Stream {}", *p.stream_id);
  line += fmt::format(", Device {}", p.launch.device);
  if (p.device) line += ", CC " + cc_text(p);
  line += ", Invocation " + invocation_text(p.launch.invocation) + "\n";
  return line;
}

std::string profile_status_line(const KernelProfile& p) {
  if (p.launch.status == 0) return "";
  std::string line = "counters not collected: " + analysis::profile_status_name(p.launch.status);
  constexpr int64_t kInsufficientPrivileges = 35;
  if (p.launch.status == kInsufficientPrivileges) {
    line +=
        " (reading GPU performance counters needs root or the nvidia module option "
        "NVreg_RestrictProfilingToAdminUsers=0; see "
        "https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
  }
  return line;
}

std::string render_kernel_profiles(const std::vector<KernelProfile>& profiles,
                                   const KernelSectionSet& sections, Format format) {
  switch (format) {
    case Format::kCsv:
      return render_csv(profiles, sections);
    case Format::kJson:
      return render_json(profiles, sections);
    case Format::kTable:
      break;
  }
  return render_table(profiles, sections);
}

}  // namespace strata::report
