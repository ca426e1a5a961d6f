// Read errors reach the user (issue 21 item 3). Each page of a small recorded
// trace is overwritten in turn with garbage, and every report, export and
// `info` runs on the damaged copy through the built binary. Each run must
// print exactly what it printed for the intact file (the page was not read:
// free, or an index or table no report uses) or fail with exit status 2, one
// line on stderr and nothing on stdout. Exit 0 with other output would be a
// damaged file passing for one with less data in it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"
#include "util/run_binary.h"

namespace strata::store {
namespace {

using Outcome = test_util::RunOutcome;

// Runs strata with `args` (no shell: a few thousand runs must stay cheap).
Outcome run_strata(const testing::TempDir& dir, const std::vector<std::string>& args) {
  return test_util::run_binary(STRATA_BINARY, args, dir.path());
}

// The commands that read each kind of trace. Formats share their reads
// (table, csv and json render one load), and so do the CPU exports, so one
// of each keeps the run short.
std::vector<std::vector<std::string>> gpu_commands(const std::string& file) {
  return {
      {"info", file},
      {"report", file},
      {"report", file, "--report",
       "cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,"
       "cuda_kern_exec_sum,op_sum"},
      {"export", file, "--format", "chrome", "-o", "-"},
  };
}

std::vector<std::vector<std::string>> cpu_commands(const std::string& file) {
  return {
      {"info", file},
      {"report", file, "--format", "csv"},
      {"export", file, "--format", "folded", "-o", "-"},
  };
}

std::vector<std::vector<std::string>> kernel_commands(const std::string& file) {
  return {
      {"report", file},
      {"report", file, "--report", "kernels", "--format", "json"},
  };
}

using Commands = std::vector<std::vector<std::string>> (*)(const std::string&);

std::string describe(const std::vector<std::string>& args) {
  std::string text = "strata";
  for (const auto& a : args) text += " " + a;
  return text;
}

// The page size from the SQLite header (offset 16, big-endian; 1 is 65536).
size_t page_size(const std::string& bytes) {
  size_t size =
      (static_cast<unsigned char>(bytes[16]) << 8) | static_cast<unsigned char>(bytes[17]);
  return size == 1 ? 65536 : size;
}

struct Tally {
  int identical = 0;
  int refused = 0;
};

// Overwrites each page of `fixture` in turn and checks every command on it.
Tally damage_each_page(const std::string& fixture, Commands commands) {
  testing::TempDir dir("strata-read-errors");
  const std::string original = testing::read_bytes(fixture);
  const std::string path = dir.file("trace.sqlite");
  testing::write_bytes(path, original);
  const auto cmds = commands(path);
  std::vector<Outcome> intact;
  for (const auto& args : cmds) intact.push_back(run_strata(dir, args));

  const size_t size = page_size(original);
  EXPECT_GE(size, 512u);
  EXPECT_EQ(original.size() % size, 0u);
  Tally tally;
  for (size_t page = 0; page * size < original.size(); ++page) {
    std::string bytes = original;
    std::mt19937_64 rng(20261203 + page);
    for (size_t i = 0; i < size; ++i) bytes[page * size + i] = static_cast<char>(rng());
    testing::write_bytes(path, bytes);
    for (size_t c = 0; c < cmds.size(); ++c) {
      Outcome got = run_strata(dir, cmds[c]);
      SCOPED_TRACE(::testing::Message()
                   << fixture << " page " << page + 1 << ": " << describe(cmds[c]));
      if (got == intact[c]) {
        ++tally.identical;
        continue;
      }
      ++tally.refused;
      EXPECT_EQ(got.status, 2) << got.err;
      EXPECT_EQ(got.out, "") << "output beside a read error";
      EXPECT_EQ(got.err.rfind("strata: ", 0), 0u) << got.err;
      EXPECT_TRUE(!got.err.empty() && got.err.find('\n') == got.err.size() - 1)
          << "not one line: " << got.err;
    }
  }
  return tally;
}

// No time limit here beyond ctest's TIMEOUT: a timed assertion fails on a
// loaded machine or a sanitized build without saying anything about strata.
void check_fixture(const std::string& fixture, Commands commands) {
  Tally tally = damage_each_page(fixture, commands);
  // Both outcomes occur, or the garbage is not reaching the reads.
  EXPECT_GT(tally.identical, 0);
  EXPECT_GT(tally.refused, 0);
}

// An Nsight Systems export: the GPU reports and the chrome export.
TEST(ReadErrors, EveryPageOfAnNsysExport) {
  check_fixture(std::string(STRATA_TEST_DATA) + "/nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite",
                gpu_commands);
}

// A strata trace with a CPU profile: the pstats tables and the CPU exports.
TEST(ReadErrors, EveryPageOfAnInstrumentedCpuTrace) {
  check_fixture(std::string(STRATA_TEST_DATA) + "/cpu-cpu_hotspot-instrument/trace.sqlite",
                cpu_commands);
}

// A strata trace with profiled kernel launches: the kernel sections.
TEST(ReadErrors, EveryPageOfAKernelsTrace) {
  check_fixture(std::string(STRATA_TEST_DATA) + "/kernels-fake_kernels_target/trace.sqlite",
                kernel_commands);
}

}  // namespace
}  // namespace strata::store
