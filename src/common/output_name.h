// Output file names with nsys's substitutions, so that one command line run in
// every rank of a torchrun/mpirun/srun job writes one file per rank:
//   %q{VAR}  the value of environment variable VAR (e.g. %q{RANK})
//   %p       strata's process id (the profiled command is its child and does
//            not exist yet when the file is named)
//   %h       the host name
//   %%       a literal %
// Pure: the environment, pid and host come in as arguments.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace strata {

// Looks up an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (getenv).
EnvLookup process_env();

struct OutputNameContext {
  EnvLookup env;
  long pid = 0;
  std::string host;
};

// Whether `pattern` holds any '%' (so callers can leave plain names alone).
bool has_output_specifiers(std::string_view pattern);

// Expands every specifier of `pattern`. Unknown specifiers (%x, a lone % at
// the end, %q without {NAME}), unset or empty variables and an empty host
// name are all collected into one error line that names each of them and the
// pattern, e.g. "output name 'trace-%q{RANK}.sqlite': environment variable
// RANK is not set".
Result<std::string> expand_output_name(std::string_view pattern, const OutputNameContext& context);

}  // namespace strata
