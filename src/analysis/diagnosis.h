// The tutorial's reasoning over every layer a trace holds: which bottleneck,
// with its evidence and a bound on what fixing it could save. Each rule is
// named, its thresholds are fields of DiagnosisThresholds
// (diagnosis_thresholds.h), and docs/diagnose.md gives the reason behind
// every number. Deterministic: the same inputs give the same findings in the
// same order.
//
// The layers: the CPU profile (cpu.hotspot, cpu.off_cpu), the GPU timeline
// (gpu.launch_sync, gpu.launch_bound, gpu.host_between_launches,
// gpu.pageable_copy), the op table (evidence for the timeline rules: many
// ops with short CUDA times) and the kernel metrics (kernel.small_grid,
// kernel.memory_bound, kernel.compute_bound, kernel.latency_bound,
// kernel.occupancy). Start-up (interpreter, imports, CUDA context, module
// loading) is reported apart, and the findings are computed over the rest.
//
// Pure: no I/O, no text formatting beyond the finding's own sentences.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"
#include "analysis/diagnosis_thresholds.h"
#include "analysis/gpu_idle.h"
#include "analysis/kernel_profile.h"
#include "analysis/python_imports.h"
#include "common/result.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"

namespace strata::analysis {

enum class FindingLayer { kCpu, kTimeline, kOps, kKernel };

// "cpu", "timeline", "ops", "kernel".
const char* finding_layer_name(FindingLayer layer);

struct Finding {
  // cpu.hotspot, cpu.off_cpu, gpu.launch_sync, gpu.launch_bound,
  // gpu.host_between_launches, gpu.pageable_copy, kernel.small_grid,
  // kernel.memory_bound, kernel.compute_bound, kernel.latency_bound,
  // kernel.occupancy
  std::string rule;
  FindingLayer layer = FindingLayer::kTimeline;
  std::string cause;                  // one sentence
  std::vector<std::string> evidence;  // figures, each "what: value"
  // What fixing it could save: the time it accounts for (Amdahl's bound),
  // or for kernel.small_grid an estimate. Findings overlap: gains do not add.
  int64_t gain_ns = 0;
  std::string try_this;
  std::string show_again;  // the report that shows the evidence again, without the file name
  // This layer explains the run: deeper layers are not needed (the
  // tutorial's Case 1: a host hotspot in a program without GPU work).
  bool explains_run = false;
};

// The CUDA calls made before the first GPU activity, heaviest first.
struct StartupPart {
  std::string name;  // CUDA call name, as cuda_api_sum prints it
  int64_t total_ns = 0;
  int64_t calls = 0;
};

// Start-up's parts besides the CUDA calls (Diagnosis::startup_parts).
struct StartupBreakdown {
  // CPU samples of the interpreter with no Python frame on the stack
  // (start-up and shutdown of the interpreter itself).
  int64_t interpreter_ns = 0;
  int64_t imports_ns = 0;          // CPU samples under an import (python_imports.h)
  std::vector<ImportRow> imports;  // the heaviest top-level imports, at most 5
  int64_t context_ns = 0;          // CUDA context creation (cudaSetDevice, cuCtxCreate, ...)
  int64_t module_loading_ns = 0;   // cuLibraryLoad*, cuModuleLoad*
};

// A part of the run to diagnose: `--range NAME`.
struct TimeWindow {
  int64_t start = 0;  // ns, CLOCK_MONOTONIC
  int64_t end = 0;
  std::string name;  // the range's name; "" for a window given by times
  int64_t occurrences = 0;
};

// What cpu.kernel_time reads from the bare runs (strata bench's wait4 rusage,
// medians over the successful runs): the time the kernel spent for the
// program, which user-mode samples cannot show, and its page faults.
struct KernelTimeFacts {
  size_t runs = 0;
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;  // user + sys
  int64_t sys_ns = 0;
  int64_t minor_faults = 0;
  int64_t peak_rss_kb = 0;
};

// Every layer the diagnosis may read; each is optional (nullptr: absent).
struct DiagnosisInputs {
  const store::GpuTables* gpu = nullptr;  // loaded with GpuLoadOptions::timeline
  const Profile* cpu = nullptr;           // a sampled CPU profile with native frames
  const store::TorchOpRows* ops = nullptr;
  const std::vector<KernelProfile>* kernels = nullptr;  // strata kernels' launches
  std::optional<TimeWindow> window;            // only this part of the run; no start-up then
  std::optional<KernelTimeFacts> kernel_time;  // the baseline's, when it has them
};

struct Diagnosis {
  GpuIdle idle;
  int64_t startup_ns = 0;                  // first CUDA call to first GPU activity
  std::vector<StartupPart> startup_parts;  // at most 5
  StartupBreakdown startup;
  // The time the CPU rules' shares are of: the window, or the run's wall
  // time less start-up (0 without a CPU profile).
  int64_t cpu_base_ns = 0;
  std::vector<Finding> findings;  // largest gain first
  // Rules that could not look at the inputs, each "rule: why".
  std::vector<std::string> not_checked;
  std::optional<TimeWindow> window;
  DiagnosisThresholds thresholds;  // the ones the findings were judged by
};

Diagnosis diagnose(const DiagnosisInputs& inputs, const DiagnosisThresholds& thresholds = {});

// The GPU timeline alone: diagnose() with only `tables`.
Diagnosis diagnose_gpu_trace(const store::GpuTables& tables,
                             const DiagnosisThresholds& thresholds = {});

// The span of every NVTX range (push/pop or start/end) and every PyTorch op
// or record_function scope named `name`, first start to last end, as nsys
// analyze's range filter takes a range. The error names the range when
// neither layer has it.
Result<TimeWindow> find_range(const DiagnosisInputs& inputs, const std::string& name);

// Whether the small-grid rule could look at the trace: it needs the GPU's SM
// count (TARGET_INFO_GPU) and the kernels' launch configurations.
bool has_launch_shapes(const store::GpuTables& tables);

// "4.74 us", "2.41 ms", "1.25 s": three significant figures in the unit that
// keeps the number between 1 and 1000; the findings' and the report's one
// way of writing a duration.
std::string short_duration(int64_t ns);

}  // namespace strata::analysis
