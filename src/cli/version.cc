// `strata version`: what this build contains, so a user can see at once
// which layers a CPU-only build lacks.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/verbs.h"
#include "common/build_info.h"

namespace strata::cli {

VerbRunner add_version(CLI::App& app) {
  app.add_subcommand("version", "Print the version and which layers this build has");
  return [] {
    std::printf("strata %s\n", build::kVersion);
    std::printf("  bench    baseline timing                        built\n");
    std::printf("  cpu      CPU profile (sampling, --instrument)   built\n");
    std::printf("  report   reports of a trace or an nsys export   built\n");
    std::printf("  export   speedscope, folded stacks, SVG         built\n");
    std::printf("  info     trace database reader                  built\n");
    std::printf("  occupancy occupancy calculator, ncu sections    built\n");
    if (build::kHaveCuda) {
      std::printf("  trace    GPU timeline, CUPTI agent (CUDA %s)  built\n", build::kCudaVersion);
    } else {
      std::printf(
          "  trace    GPU timeline and GPU examples          not built: no CUDA toolkit "
          "was found when strata was configured\n");
    }
    return kExitOk;
  };
}

}  // namespace strata::cli
