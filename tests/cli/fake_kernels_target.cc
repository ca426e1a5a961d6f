// A stand-in for a CUDA program under `strata kernels` on machines without a
// GPU: it acts as program and agent at once. It checks the environment the
// agent would read (docs/kernels.md), "launches" the anchor gemm N times and
// another kernel 3 times, and writes into $STRATA_RUN_DIR/spool-PID.bin the
// kernel-metrics chunks of the launches the filter picks and a kernels-seen
// chunk, as the agent does. It records the environment it saw in
// ./agent-env.txt for the test to check.
//
// Usage: fake_kernels_target [--gemms N] [--exit STATUS] [--no-cuda]
//   --no-cuda: write nothing, as a program on a machine without a GPU.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "../report/anchor_kernel.h"
#include "format/spool_writer.h"

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "<unset>";
}

// The agent's name rule: "regex:RE" searched in the base name; else equal to
// the base name or the mangled name.
bool matches(const std::string& filter, const std::string& mangled, const std::string& base) {
  if (filter == "<unset>") return true;
  if (filter.rfind("regex:", 0) == 0) return std::regex_search(base, std::regex(filter.substr(6)));
  return filter == base || filter == mangled;
}

}  // namespace

int main(int argc, char** argv) {
  int gemms = 4;
  int exit_status = 0;
  bool cuda = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gemms") && i + 1 < argc) gemms = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--exit") && i + 1 < argc) exit_status = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--no-cuda")) cuda = false;
  }
  std::string run_dir = env("STRATA_RUN_DIR");
  struct stat st {};
  int mode = stat(run_dir.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 0777) : -1;
  {
    std::ofstream out("agent-env.txt");
    out << "STRATA_AGENT_MODE=" << env("STRATA_AGENT_MODE") << "\n"
        << "STRATA_KERNEL_NAME=" << env("STRATA_KERNEL_NAME") << "\n"
        << "STRATA_KERNEL_SKIP=" << env("STRATA_KERNEL_SKIP") << "\n"
        << "STRATA_KERNEL_COUNT=" << env("STRATA_KERNEL_COUNT") << "\n"
        << "STRATA_KERNEL_SECTIONS=" << env("STRATA_KERNEL_SECTIONS") << "\n"
        << "STRATA_KERNEL_CACHE_CONTROL=" << env("STRATA_KERNEL_CACHE_CONTROL") << "\n"
        << "STRATA_KERNEL_METRICS=" << env("STRATA_KERNEL_METRICS") << "\n"
        << "CUDA_INJECTION64_PATH=" << (env("CUDA_INJECTION64_PATH") == "<unset>" ? "unset" : "set")
        << "\n"
        << "run_dir_mode=" << std::oct << mode << "\n";
  }
  if (!cuda || env("STRATA_AGENT_MODE") != "kernels") return exit_status;

  auto writer =
      strata::format::SpoolWriter::open(run_dir + "/spool-" + std::to_string(getpid()) + ".bin");
  if (!writer.ok()) {
    std::fprintf(stderr, "fake target: %s\n", writer.error().message.c_str());
    return 90;
  }
  std::string filter = env("STRATA_KERNEL_NAME");
  long skip =
      env("STRATA_KERNEL_SKIP") == "<unset>" ? 0 : std::atol(env("STRATA_KERNEL_SKIP").c_str());
  long count =
      env("STRATA_KERNEL_COUNT") == "<unset>" ? -1 : std::atol(env("STRATA_KERNEL_COUNT").c_str());
  uint32_t status = env("STRATA_AGENT_KERNELS_FAIL") == "privileges"
                        ? strata::testing::kInsufficientPrivileges
                        : 0;
  // STRATA_KERNEL_METRICS' names get 10.25, 20.5, ... (the agent's extra
  // counters, written after the sections').
  std::vector<std::pair<std::string, double>> extra;
  if (std::string list = env("STRATA_KERNEL_METRICS"); list != "<unset>") {
    for (size_t begin = 0; begin <= list.size();) {
      size_t end = std::min(list.find(',', begin), list.size());
      extra.push_back({list.substr(begin, end - begin), 10.25 * double(extra.size() + 1)});
      begin = end + 1;
    }
  }
  long matched = 0, profiled = 0;
  for (int i = 0; i < gemms; ++i) {
    if (!matches(filter, strata::testing::kAnchorKernel, strata::testing::kAnchorKernel)) continue;
    if (matched++ < skip) continue;
    if (count >= 0 && profiled >= count) continue;
    ++profiled;
    strata::testing::append_anchor_launch(*writer, static_cast<uint64_t>(i), status, extra);
  }
  strata::testing::append_anchor_seen(*writer, static_cast<uint64_t>(gemms));
  writer->close();
  return exit_status;
}
