// The verbs of the GPU layers (strata trace, strata kernels) in a build
// without the CUDA toolkit: each verb still exists, so that the command line
// is the same everywhere, and says why it cannot run.
#pragma once

#include <initializer_list>

#include "cli/verbs.h"

namespace strata::cli {

// Adds subcommand `name` whose options (`options`, CLI11 names such as
// "-o,--output"; `flags` take no value) and command are taken and ignored:
// the answer is the same for every command line, the one-line message that
// the GPU layers were not built, and exit status 2. `ignored_help` is the
// help text of each ignored option ("ignored: this build cannot trace").
VerbRunner add_unavailable_gpu_verb(CLI::App& app, const char* name, const char* description,
                                    std::initializer_list<const char*> options,
                                    std::initializer_list<const char*> flags,
                                    const char* ignored_help);

}  // namespace strata::cli
