// Nsight Compute's "Launch Statistics" and "Occupancy" sections (the basic
// set) for one kernel launch, from the occupancy model (analysis/occupancy.h)
// and its findings (analysis/launch_rules.h).
//
// Table format is ncu's details page: "    Section: NAME", rule lines, the
// columns Metric Name / Metric Unit / Metric Value, metric names and units as
// ncu prints them (bytes scaled to byte, Kbyte, Mbyte of 1000; integers with
// thousands separators, other values with two decimals), then each finding
// as ncu prints a rule result: "    OPT   Est. Speedup: 25%" and the text
// indented under it. CSV: one row per metric with ncu's CSV column names
// "Section Name", "Metric Name", "Metric Unit", "Metric Value"; the findings
// are for the caller to print to stderr (findings_text). JSON: an object
// {"metrics": [...], "findings": [...]}, values as numbers in the printed unit.
#pragma once

#include <string>
#include <vector>

#include "analysis/launch_rules.h"
#include "analysis/occupancy.h"
#include "report/table.h"

namespace strata::report {

struct KernelSectionsReport {
  // Rows of both sections: Section Name, Metric Name, Metric Unit, Metric Value.
  Table metrics;
  // ncu's raw metric name of each row of `metrics` (same index): "launch__block_size", ...
  std::vector<std::string> metric_ids;
  std::vector<analysis::KernelFinding> findings;
  bool launch_statistics = false;  // the grid is known, so the section is there
};

// Launch Statistics when the launch has a grid size, and Occupancy always;
// Achieved Occupancy / Achieved Active Warps Per SM only when measured.
KernelSectionsReport kernel_sections(const analysis::DeviceProps& device,
                                     const analysis::KernelLaunch& launch,
                                     const analysis::OccupancyResult& occupancy,
                                     std::vector<analysis::KernelFinding> findings);

std::string render_kernel_sections(const KernelSectionsReport& report, Format format);

// ncu's kernel line: "  NAME (G, 1, 1)x(B, 1, 1), Device DEVICE, CC 9.0".
std::string kernel_header_line(const std::string& name, const analysis::DeviceProps& device,
                               const analysis::KernelLaunch& launch);

// ncu's number format: integers whole with thousands separators, everything
// else with two decimals (and separators: "1,462.67").
Cell ncu_value_cell(double v);

// One section in ncu's details layout ("    Section: NAME", the Metric Name /
// Metric Unit / Metric Value table); rows are {section, name, unit, value}.
std::string render_section(const std::string& name,
                           const std::vector<const std::vector<Cell>*>& rows);

// A finding as ncu prints a rule result: severity and estimate, then the
// wrapped text indented beneath.
std::string render_finding(const analysis::KernelFinding& finding);

// A finding's text without the severity and estimate ("The grid of ...").
std::string finding_message(const analysis::KernelFinding& finding);
// "OPT", "INF", "WRN".
std::string severity_name(analysis::FindingSeverity severity);
// A stable identifier for scripts: "grid_smaller_than_sms", ...
std::string finding_rule_id(analysis::FindingKind kind);
// "GPU Speed Of Light Throughput", ..., "Launch Statistics", "Occupancy".
std::string section_name(analysis::KernelSection section);

// One line per finding, "SEVERITY Section: [Est. Speedup: N%] message", for
// stderr beside CSV output.
std::vector<std::string> findings_text(const KernelSectionsReport& report);

}  // namespace strata::report
