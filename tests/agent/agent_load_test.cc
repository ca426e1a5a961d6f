// libstrata_agent.so in processes without a GPU: it loads, returns from its
// entry points, says why it is not tracing in one line, and lets the process
// (and a fork()ed child) exit normally.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "cupti_walk.h"
#include "run_command.h"
#include "util/temp_dir.h"

namespace {

using examples_test::run_command;

using strata::test_util::TempDir;

// Sets an environment variable for the duration of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(AgentLoad, WithoutRunDirSaysSoOnceAndDoesNothing) {
  unsetenv("STRATA_RUN_DIR");
  auto result = run_command({AGENT_HOST, AGENT_LIB, "init"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "init=1,1\n");
  EXPECT_EQ(result.err, "strata agent: STRATA_RUN_DIR not set; not tracing\n");
}

TEST(AgentLoad, NvtxEntryWithoutRunDirDeclines) {
  unsetenv("STRATA_RUN_DIR");
  auto result = run_command({AGENT_HOST, AGENT_LIB, "nvtx"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "nvtx=0\n");
  EXPECT_EQ(count_of(result.err, "STRATA_RUN_DIR not set"), 1u);
}

TEST(AgentLoad, WithoutADeviceSaysNoCudaDeviceAndExits) {
  std::string why;
  if (examples_test::cuda_device_present(&why)) GTEST_SKIP() << "this machine has a CUDA device";
  TempDir run;
  ScopedEnv env("STRATA_RUN_DIR", run.path());
  auto result = run_command({AGENT_HOST, AGENT_LIB, "init"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "init=1,1\n");
  EXPECT_EQ(count_of(result.err, "strata agent: no CUDA device ("), 1u) << result.err;
  EXPECT_EQ(count_of(result.err, "\n"), 1u) << result.err;
  EXPECT_TRUE(agent_test::spool_files(run.path()).empty());
}

TEST(AgentLoad, WhenCuInitFailsSaysNoCudaDevice) {
  // The toolkit's stub driver: loads, and every call fails
  // (CUDA_ERROR_STUB_LIBRARY), like a driver without a device.
  if (!std::filesystem::exists(CUDA_STUB_DRIVER)) GTEST_SKIP() << "no " << CUDA_STUB_DRIVER;
  TempDir run, libs;
  std::filesystem::create_symlink(CUDA_STUB_DRIVER, libs.file("libcuda.so.1"));
  ScopedEnv env("STRATA_RUN_DIR", run.path());
  ScopedEnv path("LD_LIBRARY_PATH", libs.path());
  auto result = run_command({AGENT_HOST, AGENT_LIB, "init"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "init=1,1\n");
  EXPECT_EQ(count_of(result.err, "strata agent: no CUDA device (cuInit failed"), 1u) << result.err;
  EXPECT_TRUE(agent_test::spool_files(run.path()).empty());
}

TEST(AgentLoad, ForkWithoutExecDoesNotHang) {
  TempDir run;
  ScopedEnv env("STRATA_RUN_DIR", run.path());
  auto result = run_command({AGENT_HOST, AGENT_LIB, "fork"});
  EXPECT_EQ(result.exit_code, 0) << result.err;  // 128+SIGALRM on a hang
  EXPECT_NE(result.out.find("child running\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("child status=0\n"), std::string::npos) << result.out;
}

TEST(AgentLoad, ExportsOnlyTheInjectionEntryPointsTheTorchAttachAndTheBenchSwitch) {
  auto result = run_command({"/usr/bin/nm", "-D", "--defined-only", AGENT_LIB});
  if (result.exit_code != 0) GTEST_SKIP() << "no nm";
  std::vector<std::string> symbols;
  size_t start = 0;
  while (start < result.out.size()) {
    size_t end = result.out.find('\n', start);
    std::string line = result.out.substr(start, end - start);
    if (!line.empty()) symbols.push_back(line.substr(line.rfind(' ') + 1));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::sort(symbols.begin(), symbols.end());
  EXPECT_EQ(symbols, (std::vector<std::string>{"InitializeInjection", "InitializeInjectionNvtx2",
                                               "strata_agent_attach_torch",
                                               "strata_agent_bench_record"}))
      << result.out;
}

}  // namespace
