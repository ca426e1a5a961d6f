#include "cli/kernel_report_print.h"

#include <cstdio>

#include "analysis/kernel_profile.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "store/kernel_metric_rows.h"
#include "store/kernel_names.h"

namespace strata::cli {

namespace {

// Says why no launch was profiled. A strata_kernels_seen that cannot be read
// is the file's error, not a shorter message: returns false after printing it.
bool print_kernels_seen(const store::TraceReader& reader, const KernelPrintContext& context) {
  auto seen = store::read_kernels_seen(reader);
  if (!seen) {
    print_usage_error(seen.error().message);
    return false;
  }
  std::string why = context.filter.empty() ? "" : " (" + printable(context.filter) + ")";
  if (seen->empty()) {
    std::fprintf(stderr, "strata: no kernel launch was profiled%s, and no kernel launch was seen\n",
                 why.c_str());
    return true;
  }
  std::fprintf(stderr, "strata: no kernel launch matched%s; kernels launched (launches, name):\n",
               why.c_str());
  for (const auto& row : *seen) {
    std::string name = store::kernel_names(row.kernel_name).demangled;
    std::fprintf(stderr, "strata: %10lld  %s\n", static_cast<long long>(row.launches),
                 printable(name).c_str());
  }
  return true;
}

}  // namespace

int render_kernel_profiles_text(const store::TraceReader& reader,
                                const report::KernelSectionSet& sections, report::Format format,
                                const KernelPrintContext& context, std::string* out) {
  out->clear();
  auto launches = store::read_profiled_launches(reader);
  if (!launches) return print_usage_error(launches.error().message);
  std::vector<analysis::KernelProfile> profiles = analysis::analyze_profiled_launches(*launches);
  if (profiles.empty() && !print_kernels_seen(reader, context)) return kExitUsage;
  if (profiles.empty() && format != report::Format::kJson) return kExitOk;
  *out = report::render_kernel_profiles(profiles, sections, format);
  if (format == report::Format::kCsv) {
    // CSV holds values only; the guidance goes beside it, as strata occupancy does.
    for (const auto& p : profiles) {
      if (std::string reason = report::profile_status_line(p); !reason.empty()) {
        std::string invocation =
            p.launch.invocation >= 0 ? std::to_string(p.launch.invocation) : "?";
        std::fprintf(stderr, "strata: %s invocation %s: %s\n", printable(p.demangled).c_str(),
                     invocation.c_str(), reason.c_str());
      }
    }
  }
  return kExitOk;
}

int print_kernel_profiles(const store::TraceReader& reader,
                          const report::KernelSectionSet& sections, report::Format format,
                          const KernelPrintContext& context) {
  std::string text;
  int status = render_kernel_profiles_text(reader, sections, format, context, &text);
  if (status != kExitOk) return status;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace strata::cli
