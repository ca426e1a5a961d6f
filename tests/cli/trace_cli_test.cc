// `strata trace` without a GPU: launching, exit statuses, usage errors and
// the trace it leaves when the target made no CUDA call. A build without the
// CUDA toolkit has a `strata trace` that only says so (exit 2).
#include <gtest/gtest.h>
#include <time.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"
#include "store/cpu_profile_rows.h"
#include "store/trace_db.h"

namespace {

using strata::testing::run_strata;
using strata::testing::ScratchDir;

constexpr const char* kNoGpuLayers = "this build has no GPU layers";

// True (after checking the fallback) when this build has no GPU layers. Probes
// in a directory of its own, so the caller's stays empty.
bool without_gpu_layers(const ScratchDir&) {
  ScratchDir probe;
  auto r = run_strata("trace -- true", probe.path());
  if (r.err.find(kNoGpuLayers) == std::string::npos) return false;
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err_lines().size(), 1u);
  return true;
}

TEST(TraceCli, NoCudaCallLeavesARunAndSaysSo) {
  ScratchDir dir;
  if (without_gpu_layers(dir)) GTEST_SKIP() << "built without CUDA: fallback verb checked";
  auto r = run_strata("trace -o t.sqlite -- true", dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("no CUDA activity was recorded"), std::string::npos) << r.err;
  auto reader = strata::store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader) << reader.error().message;
  auto run = reader->run();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->verb, "trace");
  EXPECT_EQ(run->exit_status, 0);
}

TEST(TraceCli, CommandNotFoundIs127AndOneLine) {
  ScratchDir dir;
  if (without_gpu_layers(dir)) GTEST_SKIP();
  auto r = run_strata("trace -o t.sqlite -- ./no-such-program", dir.path());
  EXPECT_EQ(r.status, 127);
  EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("no-such-program"), std::string::npos);
}

TEST(TraceCli, ExitStatusPassesThrough) {
  ScratchDir dir;
  if (without_gpu_layers(dir)) GTEST_SKIP();
  EXPECT_EQ(run_strata("trace -o a.sqlite -- sh -c 'exit 3'", dir.path()).status, 3);
  EXPECT_EQ(run_strata("trace -o b.sqlite -- sh -c 'kill -TERM $$'", dir.path()).status, 143);
  auto reader = strata::store::TraceReader::open((dir.path() / "b.sqlite").string());
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->run()->signal, 15);
}

TEST(TraceCli, UnsupportedLayersAreUsageErrors) {
  ScratchDir dir;
  if (without_gpu_layers(dir)) GTEST_SKIP();
  auto r = run_strata("trace --trace cpu -- true", dir.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--trace needs cuda"), std::string::npos) << r.err;
  r = run_strata("trace --trace cuda,bogus -- true", dir.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("supported: cuda, nvtx, cpu"), std::string::npos) << r.err;
  EXPECT_EQ(run_strata("trace --trace cuda,cpu --call-graph lbr -- true", dir.path()).status, 2);
  EXPECT_EQ(run_strata("trace --stats maybe -- true", dir.path()).status, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "strata-trace1.sqlite"));
}

// --trace cuda,cpu: the CPU layer's samples land in the same trace, on
// CLOCK_MONOTONIC (the clock the agent gives CUPTI), so they line up with
// the GPU records. Without a GPU the program here makes no CUDA call.
TEST(TraceCli, CpuLayerSamplesIntoTheSameTraceOnTheMonotonicClock) {
  ScratchDir dir;
  if (without_gpu_layers(dir)) GTEST_SKIP();
  timespec before{};
  clock_gettime(CLOCK_MONOTONIC, &before);
  auto r = run_strata(std::string("trace --trace cuda,nvtx,cpu -F 2000 -o t.sqlite -- ") +
                          CPU_HOTSPOT_BIN + " --mode slow --lines 4000",
                      dir.path());
  if (r.status != 0 && r.err.find("perf_event") != std::string::npos) {
    GTEST_SKIP() << "perf_event_open refused here: " << r.err;
  }
  timespec after{};
  clock_gettime(CLOCK_MONOTONIC, &after);
  ASSERT_EQ(r.status, 0) << r.err;
  // The CPU layer's top functions are printed after the (here absent) GPU reports.
  EXPECT_NE(r.out.find("normalize_line_slow"), std::string::npos) << r.out;

  auto reader = strata::store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader) << reader.error().message;
  EXPECT_EQ(reader->run()->verb, "trace");
  auto rows = strata::store::read_cpu_profile(*reader);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_TRUE(rows->has_value());
  ASSERT_GT((*rows)->samples.size(), 20u);
  const int64_t lo = int64_t{before.tv_sec} * 1'000'000'000 + before.tv_nsec;
  const int64_t hi = int64_t{after.tv_sec} * 1'000'000'000 + after.tv_nsec;
  for (const auto& s : (*rows)->samples) {
    ASSERT_GE(s.time_ns, lo);
    ASSERT_LE(s.time_ns, hi);
  }
  // `strata report` shows the CPU profile from the trace file again.
  auto rep = run_strata("report t.sqlite --limit 3", dir.path());
  EXPECT_EQ(rep.status, 0) << rep.err;
  EXPECT_NE(rep.out.find("normalize_line_slow"), std::string::npos) << rep.out;
}

TEST(TraceCli, RefusesToOverwriteWithoutForce) {
  ScratchDir dir;
  if (without_gpu_layers(dir)) GTEST_SKIP();
  ASSERT_EQ(run_strata("trace -o t.sqlite -- true", dir.path()).status, 0);
  EXPECT_EQ(run_strata("trace -o t.sqlite -- true", dir.path()).status, 2);
  EXPECT_EQ(run_strata("trace --force -o t.sqlite -- true", dir.path()).status, 0);
}

}  // namespace
