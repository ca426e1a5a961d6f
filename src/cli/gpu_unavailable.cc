#include "cli/gpu_unavailable.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace strata::cli {

VerbRunner add_unavailable_gpu_verb(CLI::App& app, const char* name, const char* description,
                                    std::initializer_list<const char*> options,
                                    std::initializer_list<const char*> flags,
                                    const char* ignored_help) {
  auto* sub = app.add_subcommand(name, description);
  // CLI11 binds options to storage that must outlive the parse: the runner
  // holds it.
  auto ignored = std::make_shared<std::vector<std::string>>();
  auto option_value = std::make_shared<std::string>();
  auto flag_value = std::make_shared<bool>();
  for (const char* option : options) sub->add_option(option, *option_value, ignored_help);
  for (const char* flag : flags) sub->add_flag(flag, *flag_value, ignored_help);
  sub->add_option("command", *ignored, "-- CMD [ARGS...]");
  sub->positionals_at_end(true);
  return [ignored, option_value, flag_value] {
    std::fprintf(stderr,
                 "strata: this build has no GPU layers (the CUDA toolkit was not found when "
                 "strata was configured)\n");
    return kExitUsage;
  };
}

}  // namespace strata::cli
