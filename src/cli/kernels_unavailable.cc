// `strata kernels` in a build without the CUDA toolkit: the verb exists so the
// command line is the same everywhere, and says why it cannot run.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/verbs.h"

namespace strata::cli {

VerbRunner add_kernels(CLI::App& app) {
  auto* sub = app.add_subcommand("kernels",
                                 "Kernel metrics (ncu --set basic): not available in this build");
  auto ignored = std::make_shared<std::vector<std::string>>();
  auto flag = std::make_shared<std::string>();
  auto force = std::make_shared<bool>();
  for (const char* name : {"-k,--kernel-name", "-s,--launch-skip", "-c,--launch-count", "--section",
                           "--format", "-o,--output"}) {
    sub->add_option(name, *flag, "ignored: this build cannot profile kernels");
  }
  sub->add_flag("--force", *force, "ignored: this build cannot profile kernels");
  sub->add_option("command", *ignored, "-- CMD [ARGS...]");
  sub->positionals_at_end(true);
  return [ignored, flag, force] {
    std::fprintf(stderr,
                 "strata: this build has no GPU layers (the CUDA toolkit was not found when "
                 "strata was configured)\n");
    return kExitUsage;
  };
}

}  // namespace strata::cli
