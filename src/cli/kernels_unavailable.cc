// `strata kernels` in a build without the CUDA toolkit (cli/gpu_unavailable.h).
#include <CLI/CLI.hpp>

#include "cli/gpu_unavailable.h"
#include "cli/verbs.h"

namespace strata::cli {

VerbRunner add_kernels(CLI::App& app) {
  return add_unavailable_gpu_verb(app, "kernels",
                                  "Kernel metrics (ncu --set basic): not available in this build",
                                  {"-k,--kernel-name", "-s,--launch-skip", "-c,--launch-count",
                                   "--section", "--format", "-o,--output"},
                                  {"--force"}, "ignored: this build cannot profile kernels");
}

}  // namespace strata::cli
