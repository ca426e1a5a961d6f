// torch.profiler's op table (key_averages().table()) from the ops strata
// recorded (strata_torch_ops) and the CUDA rows they launched, following
// torch/autograd/profiler_util.py (1.13 and 2.x):
//   - events: every op; every CUDA runtime call (cudaLaunchKernel,
//     cudaDeviceSynchronize, ...) as a CPU event of its thread; every kernel,
//     copy and memset as a device event.
//   - _build_tree/_populate_cpu_children: per thread, events sorted by
//     (start, -end); an event's parent is the innermost open event that
//     contains it. Self CPU = duration - direct CPU children's durations.
//   - kernels: a device event belongs to the op whose external id its
//     launch's correlationId maps to (strata_external_correlation, CUSTOM0),
//     never to an op by time overlap. An op's Self CUDA = its kernels; CUDA
//     total = self + its CPU descendants'. Device rows: Self CUDA = CUDA
//     total = duration, CPU 0.
//   - _remove_dup_nodes: a child named as its parent and its parent's only
//     child is merged into it (the parent takes its children and kernels).
//   - _set_backward_stacktraces: ops under a backward node (scope 1) take
//     the Python stack of the forward op with the same sequence number.
//   - GPU user annotations (torch 2.x): a record_function scope (scope 7)
//     that launched device work also gets a device row of its name spanning
//     that work; it is not part of the Self CUDA total.
//   - key_averages: rows per name (+ input shapes, + first N stack frames);
//     totals: Self CPU = sum of self CPU, Self CUDA = sum over device rows.
//
// Threading: pure function of its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "common/result.h"
#include "store/torch_op_rows.h"

namespace strata::analysis {

enum class TorchSort { kDefault, kSelfCpu, kCpuTotal, kSelfCuda, kCudaTotal, kCount };

// torch's sort_by names (self_cpu_time_total, cpu_time_total,
// self_cuda_time_total, cuda_time_total, count) and the NVTX op table's and
// CPU reports' older ones as aliases. The error is the one-line message.
Result<TorchSort> parse_torch_sort(const std::string& name);

struct TorchOpTableOptions {
  TorchSort sort = TorchSort::kDefault;  // self CUDA when any device row, else self CPU
  size_t limit = 0;                      // rows kept after sorting; 0 = all
  bool group_by_shape = false;
  int group_by_stack = 0;  // N > 0: key on the first N frames
};

struct TorchOpTableRow {
  std::string name;
  std::string shapes;              // "[]" when none; set with group_by_shape
  std::vector<std::string> stack;  // first N frames, set with group_by_stack
  bool device = false;             // a kernel, copy, memset or GPU user annotation
  bool annotation = false;         // torch 2.x's GPU user annotation of a record_function
  int64_t calls = 0;
  int64_t self_cpu_ns = 0;
  int64_t cpu_total_ns = 0;
  int64_t self_cuda_ns = 0;
  int64_t cuda_total_ns = 0;
};

struct TorchOpTable {
  std::vector<TorchOpTableRow> rows;
  int64_t self_cpu_total_ns = 0;
  int64_t self_cuda_total_ns = 0;  // torch's sum_self_device_time_total
  bool shapes_column = false;
  bool stack_column = false;
  int64_t unlinked_device = 0;  // device events no op's external id reaches
};

// The error (one line) when --group-by-shape / --group-by-stack asks for
// what the trace did not record.
Result<TorchOpTable> torch_op_table(const store::TorchOpRows& rows,
                                    const TorchOpTableOptions& options = {});

// torch's _filter_stack_entry: frames of autograd's own backward() and
// torch's test helpers are left out of stacks.
bool keep_stack_entry(const std::string& frame);

}  // namespace strata::analysis
