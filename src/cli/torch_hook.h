// `strata trace`'s torch layer: where libstrata_torch.so and its Python hook
// are, and the environment that makes every Python process of the command
// record PyTorch ops into the run directory (docs/torch-ops.md).
#pragma once

#include <string>

#include "common/result.h"

namespace strata::cli {

struct TorchHook {
  std::string lib;       // libstrata_torch.so
  std::string hook_dir;  // the directory holding the hook's sitecustomize.py
};

struct TorchHookOptions {
  bool record_shapes = false;  // --record-shapes
  int stack_frames = 0;        // --with-stack[=N]; 0: no stacks
};

// Installed layout first (../lib beside the strata executable), then the
// build tree. The error says where it looked.
Result<TorchHook> find_torch_hook();

// STRATA_TORCH_DIR = run_dir, STRATA_TORCH_LIB, PYTHONPATH = hook dir first,
// and the options' variables (others unset, so inherited values do not leak in).
void set_torch_env(const TorchHook& hook, const std::string& run_dir, const TorchHookOptions& options);

// Unsets the variables above (PYTHONPATH is left alone): no hook runs.
void clear_torch_env();

}  // namespace strata::cli
