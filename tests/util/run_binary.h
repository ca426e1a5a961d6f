// Runs a program with exactly the given arguments, no shell in between (so
// names holding control bytes, quotes or invalid UTF-8 reach it as they are),
// stdin from /dev/null, stdout and stderr captured through files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace strata::test_util {

struct RunOutcome {
  int status = -1;  // exit status, 128 + the signal that killed it, -1 if it did not start
  std::string out;
  std::string err;
  bool operator==(const RunOutcome&) const = default;
};

// `dir` holds the capture files (stdout, stderr); the program runs in the
// current directory.
RunOutcome run_binary(const std::string& binary, const std::vector<std::string>& args,
                      const std::filesystem::path& dir);

}  // namespace strata::test_util
