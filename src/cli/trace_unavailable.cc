// `strata trace` in a build without the CUDA toolkit: the verb exists so the
// command line is the same everywhere, and says why it cannot run.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/verbs.h"

namespace strata::cli {

VerbRunner add_trace(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "trace", "CUDA/NVTX trace (nsys profile --stats): not available in this build");
  sub->allow_extras();
  sub->prefix_command();
  return [] {
    std::fprintf(stderr,
                 "strata: this build has no GPU layers (the CUDA toolkit was not found when "
                 "strata was configured)\n");
    return kExitUsage;
  };
}

}  // namespace strata::cli
