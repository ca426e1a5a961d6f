// `strata trace` on the GPU programs, end to end: agent, spool, ingest,
// trace. Label gpu; SKIPPED without a CUDA device.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cuda_device.h"
#include "util/temp_dir.h"

namespace {

namespace fs = std::filesystem;

// Runs a shell command line; the shell's status (128+N when killed).
int run(const std::string& command) {
  int status = std::system(command.c_str());
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int64_t query_int(const std::string& file, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

class TraceGpu : public ::testing::Test {
 protected:
  std::string trace(const std::string& name) const { return dir_.file(name); }
  strata::test_util::TempDir dir_{"strata-trace-gpu"};
};

constexpr const char* kGemmKernels =
    "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
    "WHERE s.value LIKE '%gemm%'";

TEST_F(TraceGpu, SlowLoopSync) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  std::string out = trace("slow.sqlite");
  ASSERT_EQ(run(std::string(STRATA_BIN) + " trace --stats false -o " + out + " -- " + GPU_MATMUL +
                " --mode slow_loop_sync --repeats 128 --tile-size 128"),
            0);
  EXPECT_EQ(query_int(out, kGemmKernels), 129);
  EXPECT_GE(query_int(out,
                      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON "
                      "s.id = r.nameId WHERE s.value LIKE 'cudaDeviceSynchronize%'"),
            128);
  EXPECT_EQ(query_int(out,
                      "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND "
                      "text = 'slow_loop_sync_iteration'"),
            128);
}

TEST_F(TraceGpu, Batched) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  std::string out = trace("batched.sqlite");
  ASSERT_EQ(run(std::string(STRATA_BIN) + " trace -o " + out + " -- " + GPU_MATMUL +
                " --mode batched --repeats 128 --tile-size 128"),
            0);
  EXPECT_GE(query_int(out, kGemmKernels), 1);
}

TEST_F(TraceGpu, CrashKeepsKernels) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  std::string out = trace("crash.sqlite");
  EXPECT_EQ(run(std::string(STRATA_BIN) + " trace --stats false -o " + out + " -- " + GPU_CRASH),
            139);
  EXPECT_GT(query_int(out, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 0);
}

}  // namespace
