// `strata kernels` / `strata report` of profiled launches: per launch, ncu's
// kernel line and its basic-set sections (GPU Speed Of Light Throughput, GPU
// and Memory Workload Distribution, Launch Statistics, Occupancy) with the
// metric names, units, number format and guidance of `ncu --set basic`
// (docs/kernels.md). Launch Statistics and Occupancy are kernel_sections.h's.
//
// Table: ncu's details page. CSV: one row per printed value with the columns
// of `ncu --csv` plus Invocation. JSON: {"kernels": [...]} as
// docs/kernels.md gives it, "metric" being ncu's raw name of each value and
// "value" the number as printed, in "unit".
#pragma once

#include <set>
#include <string>
#include <vector>

#include "analysis/kernel_profile.h"
#include "common/result.h"
#include "report/table.h"

namespace strata::report {

using KernelSectionSet = std::set<analysis::KernelSection>;

// "sol,workload,launch,occupancy" (any subset, any order); an error naming
// the bad name otherwise.
Result<KernelSectionSet> parse_kernel_sections(const std::string& list);
KernelSectionSet all_kernel_sections();

std::string render_kernel_profiles(const std::vector<analysis::KernelProfile>& profiles,
                                   const KernelSectionSet& sections, Format format);

// "  NAME (16, 1, 1)x(64, 1, 1), Context 1, Stream 7, Device 0, CC 9.0, Invocation 3".
std::string profile_header_line(const analysis::KernelProfile& profile);

// The one-line reason a launch has no counters ("counters not collected:
// CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ..."); "" for status 0.
std::string profile_status_line(const analysis::KernelProfile& profile);

}  // namespace strata::report
