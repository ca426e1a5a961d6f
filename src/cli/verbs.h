// Each verb lives in its own file and registers itself on the top-level app.
// add_<verb> creates the subcommand, binds its flags, and returns the function
// main() calls when that subcommand was chosen; it returns the exit status.
//
// Exit statuses (documented in docs/cli.md): 0 success; 1 a profiled run
// failed, a check did not hold, or stdout could not be written (main.cc); 2 usage error or
// unreadable input file; 3 strata compare's --gate found a regression; 127 the command could not be
// started; 128+N the target was killed by signal N (verbs that run one
// target exit with its status).
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace strata::cli {

using VerbRunner = std::function<int()>;

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCannotStart = 127;
// strata compare --gate PCT: B's wall time is significantly more than PCT %
// above A's. Distinct from 1 (a run failed) so that CI can tell them apart.
inline constexpr int kExitRegression = 3;

// "strata: MESSAGE" on stderr; returns the usage exit status (also that of
// an unreadable input file).
inline int print_usage_error(const std::string& message) {
  std::fprintf(stderr, "strata: %s\n", message.c_str());
  return kExitUsage;
}

VerbRunner add_bench(CLI::App& app);
VerbRunner add_cpu(CLI::App& app);
VerbRunner add_trace(CLI::App& app);
VerbRunner add_kernels(CLI::App& app);
VerbRunner add_report(CLI::App& app);
VerbRunner add_compare(CLI::App& app);
VerbRunner add_diagnose(CLI::App& app);
VerbRunner add_export(CLI::App& app);
VerbRunner add_info(CLI::App& app);
VerbRunner add_occupancy(CLI::App& app);
VerbRunner add_version(CLI::App& app);

}  // namespace strata::cli
