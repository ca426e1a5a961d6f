// `strata trace` without a GPU: launching, exit statuses, usage errors and
// the trace it leaves when the target made no CUDA call. A build without the
// CUDA toolkit has a `strata trace` that only says so (exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"
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
  EXPECT_NE(r.err.find("supported: cuda, nvtx"), std::string::npos) << r.err;
  EXPECT_EQ(run_strata("trace --trace bogus -- true", dir.path()).status, 2);
  EXPECT_EQ(run_strata("trace --stats maybe -- true", dir.path()).status, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "strata-trace1.sqlite"));
}

TEST(TraceCli, RefusesToOverwriteWithoutForce) {
  ScratchDir dir;
  if (without_gpu_layers(dir)) GTEST_SKIP();
  ASSERT_EQ(run_strata("trace -o t.sqlite -- true", dir.path()).status, 0);
  EXPECT_EQ(run_strata("trace -o t.sqlite -- true", dir.path()).status, 2);
  EXPECT_EQ(run_strata("trace --force -o t.sqlite -- true", dir.path()).status, 0);
}

}  // namespace
