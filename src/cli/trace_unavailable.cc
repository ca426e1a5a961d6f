// `strata trace` in a build without the CUDA toolkit (cli/gpu_unavailable.h).
#include <CLI/CLI.hpp>

#include "cli/gpu_unavailable.h"
#include "cli/verbs.h"

namespace strata::cli {

VerbRunner add_trace(CLI::App& app) {
  return add_unavailable_gpu_verb(
      app, "trace", "CUDA/NVTX trace (nsys profile --stats): not available in this build",
      {"--trace", "-o,--output", "--stats", "--format"}, {"--force"},
      "ignored: this build cannot trace");
}

}  // namespace strata::cli
