// What the diagnosis's rules share (analysis/diagnosis.h): the inputs as
// clipped to the window, and the rules of each layer. Internal to
// diagnosis*.cc; the public entry point is diagnose().
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis.h"

namespace strata::analysis::diag {

struct RuleContext {
  explicit RuleContext(const DiagnosisThresholds& thresholds) : th(thresholds) {}
  const DiagnosisThresholds& th;
  const store::GpuTables* gpu = nullptr;  // clipped to the window
  const GpuIdle* idle = nullptr;          // set when gpu has activity
  const Profile* cpu = nullptr;           // the Python view of a Python program; clipped
  std::vector<bool> cpu_startup;          // per sample of *cpu: left to start-up
  // Per frame of *cpu: the first frame of its function (function_frames()).
  std::vector<FrameId> cpu_function_frame;
  int64_t cpu_base_ns = 0;
  const store::TorchOpRows* ops = nullptr;  // clipped
  const std::vector<KernelProfile>* kernels = nullptr;
  const KernelTimeFacts* kernel_time = nullptr;  // the whole run's: none with a window
};

// The CPU layer.
void cpu_hotspot_rule(const RuleContext& c, std::vector<Finding>& out);
void cpu_off_cpu_rule(const RuleContext& c, std::vector<Finding>& out);
void cpu_kernel_time_rule(const RuleContext& c, std::vector<Finding>& out);

// Per frame of `profile`, the first frame of the same function as pstats
// groups them (name, file, module): a function has a frame per address, so
// time summed per frame would split it (one line's share, not the function's).
std::vector<FrameId> function_frames(const Profile& profile);

// The function the time of `sample` belongs to: the first frame from the leaf
// in the program's own code (not a system, CUDA or site-packages library),
// not inlined where one is, as its function's first frame (`function_frame`,
// from function_frames()); kInvalidFrame for an empty stack.
FrameId owner_frame(const Profile& profile, const std::vector<FrameId>& function_frame,
                    const Sample& sample);
// "normalize_line_slow(std::string const&) (../examples/cpu_hotspot_lib.cc:136)".
std::string frame_label(const Frame& frame);
// A frame of the CUDA driver, runtime or a CUDA library (cuBLAS, cuDNN, NCCL,
// torch's CUDA part): time there belongs to the GPU layers.
bool is_cuda_frame(const Frame& frame);

// The host function the CPU samples name most often inside `intervals` of
// their threads, with the sampled time there; nullopt without samples.
struct HostFunction {
  std::string label;
  int64_t ns = 0;
  int64_t sampled_ns = 0;  // all samples in the intervals
};
std::optional<HostFunction> host_function_in(const RuleContext& c,
                                             const std::vector<HostInterval>& intervals);

// The GPU timeline, with the op layer's evidence.
void timeline_rules(const RuleContext& c, std::vector<Finding>& out);
void small_grid_rule(const RuleContext& c, std::vector<Finding>& out);

// The kernel metrics (strata kernels' sections).
void kernel_rules(const RuleContext& c, std::vector<Finding>& out,
                  std::vector<std::string>& not_checked);

// Helpers shared by the rules' sentences.
std::string percent_of(int64_t part, int64_t whole);
int64_t median_of(std::vector<int64_t> values);

}  // namespace strata::analysis::diag
