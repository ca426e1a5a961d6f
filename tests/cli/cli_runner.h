// Runs the strata executable (or any shell command line) in a scratch
// directory for end-to-end tests, capturing stdout, stderr and exit status.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace strata::testing {

struct CliResult {
  int status = -1;  // the shell's status: exit status, or 128 + signal
  std::string out;
  std::string err;
  std::vector<std::string> err_lines() const;
};

// A fresh directory under the system temp dir, removed on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs `strata ARGS` through /bin/sh in `cwd`; `args` is shell text.
CliResult run_strata(const std::string& args, const std::filesystem::path& cwd);

std::string read_file(const std::filesystem::path& path);

}  // namespace strata::testing
