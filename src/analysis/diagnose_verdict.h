// `strata diagnose`'s verdict: the layers' facts side by side, which layer
// explains the time, and the rules' findings ranked by what they could save.
// Built the same way by the verb after its runs and by `strata report
// --report diagnosis` from the trace, so that both print the same verdict.
//
// The sequencing rule (shared/DESIGN.md: the CLI "stops descending when a
// layer explains the time") lives here too, as pure functions of what the
// cheaper layers found, so that it is tested without running anything:
// explained_before_kernels() decides whether the kernel-metrics run is worth
// its cost.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/cpu_pstats.h"
#include "analysis/diagnose_range.h"
#include "analysis/diagnosis.h"
#include "analysis/kernel_profile.h"
#include "analysis/stats.h"
#include "store/diagnose_rows.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"
#include "store/trace_db.h"

namespace strata::analysis {

// The baseline layer: the measured runs (warm-ups left out).
struct BaselineFacts {
  size_t runs = 0;
  size_t succeeded = 0;
  std::optional<Summary> wall_ns;  // over the successful measured runs
  std::optional<Summary> cpu_ns;   // user + sys
  std::optional<Summary> sys_ns;  // the kernel's part of cpu_ns
  // Page faults (ru_minflt), over the successful runs that recorded them.
  std::optional<Summary> minor_faults;
  std::optional<Summary> peak_rss_kb;
  double wall_cv = 0;  // wall's stddev / mean: the run-to-run noise
  // cpu / wall of the medians: near 1 (or above, with threads) on the CPU,
  // near 0 waiting (sleep, I/O, the GPU). 0 when unknown.
  double on_cpu = 0;
};
BaselineFacts baseline_facts(std::span<const store::BenchRun> runs);

// The recorded run beside the baseline: the layers' figures are of that run,
// under the instruments, so a run much slower than the baseline's (the
// instruments' cost, or a program whose speed differs from run to run) has
// host-side times, and the bounds made of them, larger than a bare run's
// (docs/diagnose.md, "The recorded run").
struct RecordedRunFacts {
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;     // user + sys
  double wall_ratio = 0;  // wall / the baseline's median wall; 0 without a baseline
  double cpu_ratio = 0;   // cpu / the baseline's median CPU time; 0 without one
  // Its page faults: a run far above the baseline's spent its time faulting
  // memory in (a heap mode, say), which the samples do not show.
  std::optional<int64_t> minor_faults;
};
// nullopt when the CPU layer did not record the run's wall time.
std::optional<RecordedRunFacts> recorded_run_facts(const Profile& recorded,
                                                   const BaselineFacts& baseline);

// The CPU layer: the recorded run's samples.
struct CpuFacts {
  uint64_t samples = 0;
  std::vector<SelfShare> hottest;  // at most 3, by self share
  // A Python program's hottest are of the samples after start-up (imports
  // and the interpreter's own left out), their shares of those samples.
  bool hottest_after_startup = false;
  // Python start-up: time under imports (python -X importtime's figure, from
  // the samples) and the heaviest modules the main script imported.
  int64_t import_ns = 0;
  // Time in samples whose stack was cut at the copy: their imports cannot be
  // told, so import_ns is a floor when this is not 0.
  int64_t import_cut_ns = 0;
  std::vector<std::pair<std::string, int64_t>>
      heaviest_imports;  // module, cumulative ns; at most 3
};
CpuFacts cpu_facts(const Profile& profile);

// Everything a verdict is built from.
struct VerdictInput {
  std::vector<store::BenchRun> bench;     // the baseline's runs
  std::optional<Profile> cpu;             // the recorded run's samples, if any
  std::optional<store::GpuTables> gpu;    // loaded with the timeline; nullopt: no CUDA data
  std::optional<store::TorchOpRows> ops;  // the op recorder's rows, if it ran
  std::vector<KernelProfile> kernels;     // the kernel-metrics layer's launches
  DiagnosisThresholds thresholds;
  std::optional<std::string> range;  // --range NAME
  std::vector<store::DiagnoseLayerRow> layers;
  std::optional<double> budget_s;
};

struct DiagnoseVerdict {
  BaselineFacts baseline;
  std::optional<RecordedRunFacts> recorded;
  std::optional<CpuFacts> cpu;
  std::optional<Diagnosis> gpu;  // when the trace has any kernel, copy or memset
  bool shapes_known = false;
  std::optional<std::string> range;
  std::optional<TimeSpan> range_span;
  // The layer that explains the time: "cpu", "off-cpu", "timeline",
  // "kernels", or "" when none does (no successful run).
  std::string explained_by;
  std::string verdict;            // one sentence
  std::vector<Finding> findings;  // every layer's, largest gain first
  int64_t cpu_base_ns = 0;        // what the CPU findings' shares are of (Diagnosis::cpu_base_ns)
  std::vector<store::DiagnoseLayerRow> layers;
  std::optional<double> budget_s;
  DiagnosisThresholds thresholds;
};

// Errors: --range names no range in the trace (the message names it).
Result<DiagnoseVerdict> build_verdict(const VerdictInput& input);

// Whether the GPU timeline already explains the time, so that the kernel
// metrics need not run: a timeline finding accounts for at least min_share
// of the work window, or there is no GPU activity at all. When false the
// kernels are the time (the GPU is busy) and their metrics are the next layer.
bool explained_before_kernels(const Diagnosis& gpu);

// The kernel names with most GPU time, at most `n`, largest first, each
// with at least `min_share` of all kernel time: the launches worth a
// kernel-metrics run (the kernel rules judge no kernel below
// kernel_share, so a run for one would cost a whole run of the program
// and change nothing).
std::vector<std::string> top_kernels(const store::GpuTables& tables, size_t n,
                                     double min_share = 0);

}  // namespace strata::analysis
