// Prints the kernel sections of a trace's profiled launches (strata kernels,
// strata report): ncu's details page, CSV or JSON (report/kernel_report.h),
// and, when no launch was profiled, why, with the kernels that were seen.
#pragma once

#include <string>

#include "report/kernel_report.h"
#include "report/table.h"
#include "store/trace_db.h"

namespace strata::cli {

struct KernelPrintContext {
  // Describes the launch filter for the "no launch matched" message
  // ("--kernel-name regex:gemm, --launch-skip 2"); empty: none was given.
  std::string filter;
};

// Returns the exit status: 0, or 2 with a one-line message when the trace
// cannot be read. No profiled launch is not an error: it is said on stderr
// (with the kernel names seen, most launched first), and JSON prints
// {"kernels": []}.
int print_kernel_profiles(const store::TraceReader& reader,
                          const report::KernelSectionSet& sections, report::Format format,
                          const KernelPrintContext& context);
// The same as text for a caller that prints it as one section of a document
// (strata report): *out is empty where nothing is printed (no launch, outside
// JSON); the stderr lines are written as above.
int render_kernel_profiles_text(const store::TraceReader& reader,
                                const report::KernelSectionSet& sections, report::Format format,
                                const KernelPrintContext& context, std::string* out);

}  // namespace strata::cli
