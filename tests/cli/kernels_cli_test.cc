// `strata kernels` end to end without a GPU: a fake target
// (fake_kernels_target.cc) writes the agent's kernel chunks, so the launch,
// the agent's environment, ingest, the sections, the "no launch matched"
// listing, the failed-collection path, exit statuses and usage errors are
// all checked here; `strata report` of the trace it leaves prints the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "store/trace_db.h"

namespace {

using strata::testing::read_file;
using strata::testing::run_strata;
using strata::testing::ScratchDir;

const std::string kFake = FAKE_KERNELS_TARGET;

TEST(KernelsCli, ProfilesTheAnchorLaunchAsNcu) {
  ScratchDir dir;
  auto r = run_strata(
      "kernels -o k.sqlite --kernel-name regex:gemm --launch-skip 1 --launch-count 1 -- " + kFake,
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("  sm80_xmma_gemm_", 0), 0u) << r.out;
  EXPECT_NE(
      r.out.find("(16, 1, 1)x(64, 1, 1), Context 1, Stream 7, Device 0, CC 9.0, Invocation 1\n"),
      std::string::npos)
      << r.out;
  for (const char* text :
       {"Section: GPU Speed Of Light Throughput", "Duration", "7.78", "15,368", "1,462.67",
        "Section: Occupancy", "37.50", "This kernel grid is too small"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
  // One launch only: skip 1, count 1.
  EXPECT_EQ(r.out.find("Invocation 0"), std::string::npos);
  EXPECT_EQ(r.out.find("Invocation 2"), std::string::npos);
  std::string env = read_file(dir.path() / "agent-env.txt");
  for (const char* line :
       {"STRATA_AGENT_MODE=kernels\n", "STRATA_KERNEL_NAME=regex:gemm\n", "STRATA_KERNEL_SKIP=1\n",
        "STRATA_KERNEL_COUNT=1\n", "STRATA_KERNEL_SECTIONS=sol,workload,launch,occupancy\n",
        "STRATA_KERNEL_CACHE_CONTROL=all\n", "CUDA_INJECTION64_PATH=set\n", "run_dir_mode=700\n"}) {
    EXPECT_NE(env.find(line), std::string::npos) << line << "\n" << env;
  }
  EXPECT_NE(r.err.find("strata: trace written to k.sqlite"), std::string::npos) << r.err;

  // strata report of the trace prints the same sections, --report kernels too.
  auto again = run_strata("report k.sqlite", dir.path());
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
  auto chosen = run_strata("report k.sqlite --report kernels --format json", dir.path());
  ASSERT_EQ(chosen.status, 0) << chosen.err;
  auto j = nlohmann::json::parse(chosen.out);
  ASSERT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0]["invocation"], 1);
  EXPECT_EQ(j["kernels"][0]["sections"][0]["metrics"][5]["metric"], "gpu__time_duration.sum");
  EXPECT_EQ(j["kernels"][0]["sections"][0]["metrics"][5]["value"], 7.78);
}

TEST(KernelsCli, DefaultEnvAndCsvAndSections) {
  ScratchDir dir;
  auto r = run_strata(
      "kernels -o k.sqlite --section launch,occupancy --format csv -- " + kFake + " --gemms 2",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::string env = read_file(dir.path() / "agent-env.txt");
  EXPECT_NE(env.find("STRATA_KERNEL_NAME=<unset>\n"), std::string::npos) << env;
  EXPECT_NE(env.find("STRATA_KERNEL_COUNT=<unset>\n"), std::string::npos) << env;
  EXPECT_NE(env.find("STRATA_KERNEL_SECTIONS=launch,occupancy\n"), std::string::npos) << env;
  EXPECT_EQ(r.out.rfind("\"ID\",\"Process ID\",\"Kernel Name\"", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"Launch Statistics\",\"Waves Per SM\",\"\",\"0.01\""), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Speed Of Light"), std::string::npos);
  EXPECT_NE(r.out.find("\"(16, 1, 1)\",\"0\",\"9.0\",\"1\",\"Occupancy\""), std::string::npos)
      << r.out;
}

// --cache-control all|none (ncu's): all by default, also over an inherited
// STRATA_KERNEL_CACHE_CONTROL; the = form as every long option of CLI11.
TEST(KernelsCli, CacheControlReachesTheAgent) {
  ScratchDir dir;
  auto cache_env = [&] {
    std::string env = read_file(dir.path() / "agent-env.txt");
    size_t at = env.find("STRATA_KERNEL_CACHE_CONTROL=");
    if (at == std::string::npos) return std::string("<missing>");
    at += std::strlen("STRATA_KERNEL_CACHE_CONTROL=");
    return env.substr(at, env.find('\n', at) - at);
  };
  setenv("STRATA_KERNEL_CACHE_CONTROL", "none", 1);
  auto inherited = run_strata("kernels -o a.sqlite -- " + kFake, dir.path());
  unsetenv("STRATA_KERNEL_CACHE_CONTROL");
  ASSERT_EQ(inherited.status, 0) << inherited.err;
  EXPECT_EQ(cache_env(), "all") << "default, whatever the caller's environment holds";

  auto none = run_strata("kernels -o b.sqlite --cache-control none -- " + kFake, dir.path());
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(cache_env(), "none");
  EXPECT_NE(none.out.find("Section: GPU Speed Of Light Throughput"), std::string::npos) << none.out;

  auto all = run_strata("kernels -o c.sqlite --cache-control all -- " + kFake, dir.path());
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(cache_env(), "all");

  auto eq = run_strata("kernels -o d.sqlite --cache-control=none -- " + kFake, dir.path());
  ASSERT_EQ(eq.status, 0) << eq.err;
  EXPECT_EQ(cache_env(), "none");

  auto help = run_strata("kernels --help", dir.path());
  EXPECT_EQ(help.status, 0) << help.err;
  EXPECT_NE(help.out.find("--cache-control"), std::string::npos) << help.out;
}

// --metrics (ncu's): the names reach the agent, their values print under
// "Command line profiler metrics" with ncu's units, in every format, and
// again from the trace; a bad list is a usage error before anything runs.
TEST(KernelsCli, MetricsReachTheAgentAndPrintInTheirOwnSection) {
  ScratchDir dir;
  const std::string list =
      "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum";
  auto r = run_strata("kernels -o m.sqlite --launch-count 1 --metrics " + list + " -- " + kFake,
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_file(dir.path() / "agent-env.txt").find("STRATA_KERNEL_METRICS=" + list + "\n"),
            std::string::npos);
  size_t section = r.out.find("Section: Command line profiler metrics");
  ASSERT_NE(section, std::string::npos) << r.out;
  size_t adu = r.out.find("sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed", section);
  size_t sectors = r.out.find("lts__t_sectors.sum", section);
  ASSERT_NE(adu, std::string::npos) << r.out;
  ASSERT_NE(sectors, std::string::npos) << r.out;
  EXPECT_LT(sectors, adu) << "by name, as ncu lists them";
  EXPECT_NE(r.out.find("10.25", adu), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sector", sectors), std::string::npos) << r.out;
  // The sections' own metrics are not repeated there.
  EXPECT_EQ(r.out.find("gpu__time_duration.sum", section), std::string::npos) << r.out;

  auto json = run_strata("report --format json m.sqlite", dir.path());
  ASSERT_EQ(json.status, 0) << json.err;
  auto j = nlohmann::json::parse(json.out);
  const auto& sections = j["kernels"][0]["sections"];
  ASSERT_FALSE(sections.empty());
  const auto& extra = sections[sections.size() - 1];
  EXPECT_EQ(extra["name"], "Command line profiler metrics");
  ASSERT_EQ(extra["metrics"].size(), 2u);
  EXPECT_EQ(extra["metrics"][1]["metric"],
            "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(extra["metrics"][1]["unit"], "%");
  EXPECT_EQ(extra["metrics"][1]["value"], 10.25);

  auto none = run_strata("kernels -o n.sqlite --launch-count 1 -- " + kFake, dir.path());
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(read_file(dir.path() / "agent-env.txt").find("STRATA_KERNEL_METRICS=<unset>\n"),
            std::string::npos);
  EXPECT_EQ(none.out.find("Command line profiler metrics"), std::string::npos);

  std::string seventeen = "m__0";
  for (int i = 1; i < 17; ++i) seventeen += ",m__" + std::to_string(i);
  for (const std::string& bad : {std::string("sol"), std::string("sm__cycles_active.avg,"),
                                 std::string("'sm__x;y'"), seventeen}) {
    auto b = run_strata("kernels -o b.sqlite --metrics " + bad + " -- " + kFake, dir.path());
    EXPECT_EQ(b.status, 2) << bad;
    EXPECT_EQ(b.err.rfind("strata: --metrics '", 0), 0u) << b.err;
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "b.sqlite")) << bad;
  }
}

TEST(KernelsCli, NoLaunchMatchedListsKernelsSeenByCount) {
  ScratchDir dir;
  auto r = run_strata("kernels -o k.sqlite --kernel-name nosuchkernel -- " + kFake, dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  size_t head = r.err.find("no kernel launch matched (--kernel-name nosuchkernel)");
  ASSERT_NE(head, std::string::npos) << r.err;
  size_t gemm = r.err.find("         4  sm80_xmma_gemm_");
  size_t add = r.err.find("         3  elementwise_add(float const*, float const*, float*, int)");
  ASSERT_NE(gemm, std::string::npos) << r.err;
  ASSERT_NE(add, std::string::npos) << r.err;
  EXPECT_LT(gemm, add);  // most launched first
  auto j = run_strata("report k.sqlite --report kernels --format json", dir.path());
  EXPECT_EQ(j.status, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["kernels"].size(), 0u);
}

TEST(KernelsCli, FailedCollectionPrintsReasonAndLaunchValues) {
  ScratchDir dir;
  auto r = run_strata(
      "kernels -o k.sqlite --launch-count 1 -- env STRATA_AGENT_KERNELS_FAIL=privileges " + kFake,
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("Invocation 0\n    counters not collected: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Speed Of Light"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Section: Launch Statistics"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Block Limit Registers"), std::string::npos) << r.out;
}

TEST(KernelsCli, NoGpuSaysNoKernelWasProfiled) {
  ScratchDir dir;
  auto r = run_strata("kernels -o k.sqlite -- " + kFake + " --no-cuda --exit 3", dir.path());
  EXPECT_EQ(r.status, 3);  // the target's status
  EXPECT_NE(r.err.find("no kernel was profiled: no agent output was found (no CUDA device"),
            std::string::npos)
      << r.err;
  auto reader = strata::store::TraceReader::open((dir.path() / "k.sqlite").string());
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_EQ(reader->run()->verb, "kernels");
  EXPECT_EQ(reader->run()->exit_status, 3);
  auto json = run_strata("kernels -o j.sqlite --format json -- true", dir.path());
  EXPECT_EQ(json.status, 0);
  EXPECT_EQ(nlohmann::json::parse(json.out)["kernels"].size(), 0u);
}

TEST(KernelsCli, ExitStatuses) {
  ScratchDir dir;
  EXPECT_EQ(run_strata("kernels -o a.sqlite -- " + kFake + " --exit 5", dir.path()).status, 5);
  EXPECT_EQ(run_strata("kernels -o b.sqlite -- sh -c 'kill -TERM $$'", dir.path()).status, 143);
  auto missing = run_strata("kernels -o c.sqlite -- ./no-such-program", dir.path());
  EXPECT_EQ(missing.status, 127);
  EXPECT_EQ(missing.err_lines().size(), 1u) << missing.err;
  // An existing trace is kept unless --force.
  auto kept = run_strata("kernels -o a.sqlite -- true", dir.path());
  EXPECT_EQ(kept.status, 2) << kept.err;
  EXPECT_EQ(run_strata("kernels -o a.sqlite --force -- true", dir.path()).status, 0);
}

TEST(KernelsCli, BadFlagsAreOneLineUsageErrors) {
  ScratchDir dir;
  struct Case {
    const char* args;
    const char* message;
  } cases[] = {
      {"--section sol,bogus",
       "--section 'bogus': unknown section (use sol, workload, launch, occupancy)"},
      {"--format xml", "xml"},
      {"--launch-count 0", "--launch-count must be at least 1, is 0"},
      {"--launch-skip -1", "--launch-skip must not be negative, is -1"},
      {"--launch-count many", "--launch-count"},
      {"--kernel-name 'regex:(gemm'", "--kernel-name 'regex:(gemm': not a regular expression"},
      // ECMAScript's (?:...) is no POSIX extended RE, which the agent compiles.
      {"--kernel-name 'regex:(?:gemm)'", "not a regular expression"},
      {"--kernel-name ''", "--kernel-name: empty name"},
      {"--cache-control some", "--cache-control 'some': unknown value (use all or none)"},
      {"--cache-control=ALL", "--cache-control 'ALL': unknown value (use all or none)"},
      {"--cache-control ''", "--cache-control '': unknown value (use all or none)"},
  };
  for (const Case& c : cases) {
    auto r = run_strata(std::string("kernels ") + c.args + " -- true", dir.path());
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
  auto none = run_strata("kernels", dir.path());
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "no trace for a usage error";
}

}  // namespace
