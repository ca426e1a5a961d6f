// The `diagnosis` report: analysis/diagnosis.h's findings over one trace's
// GPU timeline, ranked by the time each could save, with the work window,
// the GPU's busy share, the idle breakdown and start-up above them (text).
// Text puts each finding's evidence, what to try and the report that shows
// it again under the table; CSV and JSON carry them as columns (and carry
// the findings only: the window and the verdict are text's).
#pragma once

#include <string>

#include "analysis/diagnose_verdict.h"
#include "analysis/diagnosis.h"
#include "report/gpu_reports.h"

namespace strata::report {

// `shapes_known`: whether the small-grid rule could run (has_launch_shapes).
GpuReport diagnosis_report(const analysis::Diagnosis& diagnosis, const std::string& source,
                           bool shapes_known, const GpuReportOptions& options = {});

// The registry's entry point: diagnoses `tables` (loaded with the timeline).
GpuReport diagnosis_report_of(const store::GpuTables& tables, const std::string& source,
                              const GpuReportOptions& options);

// `strata diagnose`'s whole verdict (analysis/diagnose_verdict.h): the
// baseline, start-up, the layers that ran or were skipped and why, the GPU
// diagnosis above with its findings, and the verdict line; `source` is the
// trace file the "again" commands name. Table: text for people; JSON: one
// object (docs/diagnose.md has its keys). CSV is refused by the caller.
// The same verdict for the HTML page (src/html): its sentence, the baseline,
// start-up, the CPU's hottest functions, the GPU's work window and idle
// breakdown and the layer log as header lines, and every finding as a row
// with JSON's columns.
GpuReport verdict_report(const analysis::DiagnoseVerdict& verdict, const std::string& source);

std::string render_verdict(const analysis::DiagnoseVerdict& verdict, const std::string& source,
                           Format format);

}  // namespace strata::report
