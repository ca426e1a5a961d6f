#include "report/registry.h"

#include <algorithm>
#include <array>

#include "analysis/gpu_summary.h"
#include "report/diagnosis_report.h"
#include "report/multi_rank_report.h"

namespace strata::report {
namespace {

using store::GpuTables;

GpuReport api_sum(const GpuTables& t, const std::string& source, const GpuReportOptions& o) {
  return cuda_api_sum_report(analysis::cuda_api_sum(t), source, o);
}
GpuReport kern_sum(const GpuTables& t, const std::string& source, const GpuReportOptions& o) {
  return cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(t), source, o);
}
GpuReport mem_size_sum(const GpuTables& t, const std::string& source, const GpuReportOptions& o) {
  return cuda_gpu_mem_size_sum_report(analysis::cuda_gpu_mem_size_sum(t), source, o);
}
GpuReport mem_time_sum(const GpuTables& t, const std::string& source, const GpuReportOptions& o) {
  return cuda_gpu_mem_time_sum_report(analysis::cuda_gpu_mem_time_sum(t), source, o);
}
GpuReport kern_exec_sum(const GpuTables& t, const std::string& source, const GpuReportOptions& o) {
  return cuda_kern_exec_sum_report(analysis::cuda_kern_exec_sum(t), source, o);
}
GpuReport nvtx(const GpuTables& t, const std::string& source, const GpuReportOptions& o) {
  return nvtx_sum_report(analysis::nvtx_sum(t), source, o);
}
GpuReport ops(const GpuTables& t, const std::string& source, const GpuReportOptions& o) {
  return op_sum_report(analysis::op_table(t), source, o);
}

GpuReport rank_sum(const RankReportArgs& a) {
  return rank_sum_report(a.result, a.inputs);
}
GpuReport collective_sum(const RankReportArgs& a) {
  return collective_sum_report(a.result, a.limit);
}
GpuReport straggler_sum(const RankReportArgs& a) {
  return straggler_sum_report(a.result);
}

GpuReport diagnosis(const store::GpuTables& t, const std::string& s, const GpuReportOptions& o) {
  return diagnosis_report_of(t, s, o);
}

using In = ReportInput;

// In the order `--report`'s help lists them.
constexpr std::array kReports = {
    ReportEntry{"cuda_api_sum", "CUDA runtime and driver calls per name", In::kGpuTables, 2,
                api_sum},
    ReportEntry{"cuda_gpu_kern_sum", "kernels per name", In::kGpuTables, 3, kern_sum},
    ReportEntry{"cuda_gpu_mem_time_sum", "memcpy/memset time per operation", In::kGpuTables, 4,
                mem_time_sum},
    ReportEntry{"cuda_gpu_mem_size_sum", "memcpy/memset bytes per operation", In::kGpuTables, 5,
                mem_size_sum},
    ReportEntry{"cuda_kern_exec_sum", "kernels with their launch call: API, queue and kernel time",
                In::kGpuTables, 0, kern_exec_sum},
    ReportEntry{"nvtx_sum", "NVTX push/pop and start/end ranges per name", In::kGpuTables, 1, nvtx},
    ReportEntry{
        "op_sum",
        "PyTorch ops as torch.profiler's table (else NVTX ranges): self and total CPU and GPU time",
        In::kGpuTables, 0, ops},
    ReportEntry{"diagnosis",
                "the bottleneck of the GPU timeline: findings ranked by what they could save",
                In::kGpuTables, 0, diagnosis, nullptr, true},
    ReportEntry{"kernels", "the sections of strata kernels", In::kKernelProfiles},
    ReportEntry{"rank_sum", "one row per rank: kernels, compute, communication, busy and idle",
                In::kRanks, 0, nullptr, rank_sum},
    ReportEntry{"collective_sum", "one row per matched collective: who arrived last, by how much",
                In::kRanks, 0, nullptr, collective_sum},
    ReportEntry{"straggler_sum", "one row per rank: how often it was last, the delay it caused",
                In::kRanks, 0, nullptr, straggler_sum},
};

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::span<const ReportEntry> report_registry() {
  return kReports;
}

const ReportEntry* find_report(std::string_view name, ReportInput input) {
  for (const auto& e : kReports) {
    if (e.input == input && name == e.name) return &e;
  }
  return nullptr;
}

std::vector<std::string> report_names(ReportInput input) {
  std::vector<std::string> out;
  for (const auto& e : kReports) {
    if (e.input == input) out.emplace_back(e.name);
  }
  return out;
}

std::string known_reports(ReportInput input) {
  auto names = report_names(input);
  // The single-file message has always listed the GPU reports by name; the
  // multi-rank one in the order they print.
  if (input == ReportInput::kGpuTables) std::sort(names.begin(), names.end());
  return join(names);
}

std::vector<std::string> default_gpu_reports() {
  std::vector<const ReportEntry*> picked;
  for (const auto& e : kReports) {
    if (e.input == ReportInput::kGpuTables && e.default_order > 0) picked.push_back(&e);
  }
  std::sort(picked.begin(), picked.end(),
            [](const auto* a, const auto* b) { return a->default_order < b->default_order; });
  std::vector<std::string> out;
  for (const auto* e : picked) out.emplace_back(e->name);
  return out;
}

std::string report_flag_help() {
  std::string help = "GPU reports: " + join(report_names(ReportInput::kGpuTables));
  for (const auto& e : kReports) {
    if (e.input == ReportInput::kKernelProfiles) {
      help += ", " + std::string(e.name) + " (" + e.help + ")";
    }
  }
  return help + "; with several files: " + known_reports(ReportInput::kRanks);
}

}  // namespace strata::report
