// The tutorial's reasoning over one trace's GPU timeline: which bottleneck,
// with its evidence and a bound on what fixing it could save. Each rule is
// named, its thresholds are fields of DiagnosisThresholds, and
// docs/diagnose.md gives the reason behind every number. Deterministic: the
// same trace gives the same findings in the same order.
//
// This is the timeline and kernel part of `strata diagnose` (issue 19): the
// rules that read nsys's tables. Start-up is reported apart from the
// findings, which are computed over the work window only (gpu_idle.h).
//
// Pure: no I/O, no text formatting beyond the finding's own sentences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gpu_idle.h"
#include "store/gpu_tables.h"

namespace strata::analysis {

struct DiagnosisThresholds {
  // A finding must account for at least this share of the work window.
  double min_share = 0.10;
  // Synchronizing calls per kernel launch from which the launch/sync finding
  // says "a sync after (almost) every launch".
  double syncs_per_launch = 0.5;
  // A kernel name takes part in the small-grid rule when its kernels take
  // at least this share of all kernel time.
  double small_grid_kernel_share = 0.10;
};

enum class FindingLayer { kTimeline, kKernel };

struct Finding {
  std::string rule;   // "gpu.launch_sync", "gpu.host_between_launches", "kernel.small_grid"
  FindingLayer layer = FindingLayer::kTimeline;
  std::string cause;  // one sentence
  std::vector<std::string> evidence;  // figures, each "what: value"
  // What fixing it could save: the idle time it accounts for (timeline
  // rules), or an estimate (kernel rules). Findings overlap: gains do not add.
  int64_t gain_ns = 0;
  std::string try_this;
  std::string show_again;  // the report that shows the evidence again, without the file name
};

// The CUDA calls made before the first GPU activity, heaviest first.
struct StartupPart {
  std::string name;  // CUDA call name, as cuda_api_sum prints it
  int64_t total_ns = 0;
  int64_t calls = 0;
};

struct Diagnosis {
  GpuIdle idle;
  int64_t startup_ns = 0;  // first CUDA call to first GPU activity
  std::vector<StartupPart> startup_parts;  // at most 5
  std::vector<Finding> findings;           // largest gain first
  DiagnosisThresholds thresholds;          // the ones the findings were judged by
};

Diagnosis diagnose_gpu_trace(const store::GpuTables& tables,
                             const DiagnosisThresholds& thresholds = {});

// Whether the small-grid rule could look at the trace: it needs the GPU's SM
// count (TARGET_INFO_GPU) and the kernels' launch configurations.
bool has_launch_shapes(const store::GpuTables& tables);

// "4.74 us", "2.41 ms", "1.25 s": three significant figures in the unit that
// keeps the number between 1 and 1000; the findings' and the report's one
// way of writing a duration.
std::string short_duration(int64_t ns);

}  // namespace strata::analysis
