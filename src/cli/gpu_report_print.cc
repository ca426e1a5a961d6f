#include "cli/gpu_report_print.h"

#include <cstdio>
#include <set>

#include "analysis/gpu_summary.h"
#include "cli/verbs.h"
#include "report/gpu_reports.h"
#include "store/gpu_tables.h"

namespace strata::cli {
namespace {

const std::set<std::string>& known_reports() {
  static const std::set<std::string> kNames = {"cuda_api_sum",
                                               "cuda_gpu_kern_sum",
                                               "cuda_gpu_mem_time_sum",
                                               "cuda_gpu_mem_size_sum",
                                               "cuda_kern_exec_sum",
                                               "nvtx_sum",
                                               "op_sum"};
  return kNames;
}

}  // namespace

std::vector<std::string> default_gpu_reports() {
  return {"nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
          "cuda_gpu_mem_size_sum"};
}

bool has_cuda_data(const store::TraceReader& reader) {
  auto tables = reader.tables();
  if (!tables) return false;
  for (const auto& t : *tables) {
    if ((t.name == "CUPTI_ACTIVITY_KIND_RUNTIME" || t.name == "CUPTI_ACTIVITY_KIND_KERNEL") &&
        t.rows > 0) {
      return true;
    }
  }
  return false;
}

int print_gpu_reports(const store::TraceReader& reader, const std::vector<std::string>& names,
                      report::Format format) {
  for (const auto& name : names) {
    if (!known_reports().count(name)) {
      std::string list;
      for (const auto& k : known_reports()) list += (list.empty() ? "" : ", ") + k;
      std::fprintf(stderr, "strata: unknown --report '%s' (known: %s)\n", name.c_str(),
                   list.c_str());
      return kExitUsage;
    }
  }
  auto tables = store::load_gpu_tables(reader.handle(), reader.path());
  if (!tables) {
    std::fprintf(stderr, "strata: %s\n", tables.error().message.c_str());
    return kExitUsage;
  }
  const std::string& source = reader.path();
  report::GpuReportOptions options;
  options.format = format;
  bool first = true;
  for (const auto& name : names) {
    report::GpuReport r;
    if (name == "cuda_api_sum") {
      r = report::cuda_api_sum_report(analysis::cuda_api_sum(*tables), source, options);
    } else if (name == "cuda_gpu_kern_sum") {
      r = report::cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(*tables), source, options);
    } else if (name == "cuda_gpu_mem_time_sum") {
      r = report::cuda_gpu_mem_time_sum_report(analysis::cuda_gpu_mem_time_sum(*tables), source,
                                               options);
    } else if (name == "cuda_gpu_mem_size_sum") {
      r = report::cuda_gpu_mem_size_sum_report(analysis::cuda_gpu_mem_size_sum(*tables), source,
                                               options);
    } else if (name == "cuda_kern_exec_sum") {
      r = report::cuda_kern_exec_sum_report(analysis::cuda_kern_exec_sum(*tables), source, options);
    } else if (name == "nvtx_sum") {
      r = report::nvtx_sum_report(analysis::nvtx_sum(*tables), source, options);
    } else {
      r = report::op_sum_report(analysis::op_table(*tables), source, options);
    }
    if (!first) std::fputs("\n", stdout);
    first = false;
    std::fputs(report::render_gpu_report(r, format).c_str(), stdout);
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace strata::cli
