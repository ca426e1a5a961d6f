// Runs the strata executable (or any shell command line) in a scratch
// directory for end-to-end tests, capturing stdout, stderr and exit status.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/temp_dir.h"

namespace strata::testing {

struct CliResult {
  int status = -1;  // the shell's status: exit status, or 128 + signal
  std::string out;
  std::string err;
  std::vector<std::string> err_lines() const;
};

// The directory a test runs strata in: tests/util's TempDir.
using ScratchDir = test_util::TempDir;

// Runs `strata ARGS` through /bin/sh in `cwd`; `args` is shell text.
CliResult run_strata(const std::string& args, const std::filesystem::path& cwd);

std::string read_file(const std::filesystem::path& path);

}  // namespace strata::testing
