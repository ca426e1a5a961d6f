// store/torch_op_rows: the three PyTorch tables written and read back, and
// the CUDA rows the op table reads with them, named as torch names them.
#include "store/torch_op_rows.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "util/temp_dir.h"

namespace strata::store {
namespace {

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
}

TEST(TorchOpRows, WrittenRowsAndTheirCudaRowsReadBack) {
  test_util::TempDir dir{"strata-torch-rows"};
  const std::string path = dir.file("t.sqlite");
  {
    auto w = TraceWriter::create(path, false);
    ASSERT_TRUE(w) << w.error().message;
    auto mm = w->intern("aten::mm");
    auto shapes = w->intern("[[2, 2], [2, 2]]");
    auto launch = w->intern("cudaLaunchKernel_v7000");
    auto driver = w->intern("cuLaunchKernel");
    auto other_driver = w->intern("cuMemAlloc_v2");
    auto props = w->intern("cudaGetDeviceProperties_v2");
    auto gemm = w->intern("void gemm<float>()");
    ASSERT_TRUE(mm && shapes && launch && driver && other_driver && props && gemm);
    TorchOpRow op;
    op.start = 10;
    op.end = 90;
    op.global_tid = 7;
    op.name_id = *mm;
    op.external_id = 3;
    op.seq = 1;
    op.shapes_id = *shapes;
    ASSERT_TRUE(write_torch_ops(*w, std::vector<TorchOpRow>{op}));
    ASSERT_TRUE(write_torch_status(*w, {1 << 24, 1, "recorded"}));
    ASSERT_TRUE(
        write_external_correlations(*w, std::vector<ExternalCorrelationRow>{{1 << 24, 3, 3, 55}}));
    sqlite3* db = w->handle();
    exec(db,
         "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
         "correlationId, nameId, returnValue) VALUES (20, 30, 0, 7, 55, " +
             std::to_string(*launch) + ", 0), (21, 29, 1, 7, 56, " + std::to_string(*driver) +
             ", 0), (31, 32, 1, 7, 59, " + std::to_string(*other_driver) +
             ", 0), (33, 34, 0, 7, 60, " + std::to_string(*props) + ", 0)");
    exec(db,
         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
         "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, "
         "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
         "localMemoryPerThread, localMemoryTotal, gridId) VALUES (40, 47, 0, 1, 7, 55, " +
             std::to_string(1 << 24) + ", " + std::to_string(*gemm) + ", " + std::to_string(*gemm) +
             ", 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)");
    exec(db,
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
         "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES "
         "(50, 60, 0, 1, 7, 57, 16777216, 64, 1, 0, 2)");
    exec(db,
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
         "correlationId, globalPid, value, bytes, memKind) VALUES "
         "(61, 62, 0, 1, 7, 58, 16777216, 0, 64, 2)");
    ASSERT_TRUE(w->commit());
  }
  auto r = TraceReader::open(path);
  ASSERT_TRUE(r) << r.error().message;
  auto present = torch_ops_present(*r);
  ASSERT_TRUE(present);
  EXPECT_TRUE(*present);
  auto rows = load_torch_op_rows(*r);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->ops.size(), 1u);
  EXPECT_EQ(rows->ops[0].name, "aten::mm");
  EXPECT_EQ(rows->ops[0].shapes, "[[2, 2], [2, 2]]");
  EXPECT_FALSE(rows->ops[0].stack);
  EXPECT_EQ(rows->ops[0].external_id, 3);
  ASSERT_EQ(rows->statuses.size(), 1u);
  EXPECT_EQ(rows->statuses[0].text, "recorded");
  ASSERT_EQ(rows->correlations.size(), 1u);
  EXPECT_EQ(rows->correlations[0].correlation_id, 55);
  // As Kineto on torch 2.11: runtime calls with long version suffixes
  // dropped, short ones kept; of the driver calls only kernel launches.
  ASSERT_EQ(rows->runtime.size(), 3u);
  EXPECT_EQ(rows->runtime[0].name, "cudaLaunchKernel");
  EXPECT_EQ(rows->runtime[1].name, "cuLaunchKernel");
  EXPECT_EQ(rows->runtime[2].name, "cudaGetDeviceProperties_v2");
  ASSERT_EQ(rows->device.size(), 3u);
  EXPECT_EQ(rows->device[0].name, "void gemm<float>()");
  EXPECT_EQ(rows->device[1].name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(rows->device[2].name, "Memset (Device)");
}

TEST(TorchOpRows, AFileWithoutTheTablesHasNoOps) {
  test_util::TempDir dir{"strata-torch-rows"};
  const std::string path = dir.file("old.sqlite");
  {
    auto w = TraceWriter::create(path, false);
    ASSERT_TRUE(w);
    exec(w->handle(),
         "DROP TABLE strata_torch_ops; DROP TABLE strata_torch_status; "
         "DROP TABLE strata_external_correlation");
    ASSERT_TRUE(w->commit());
  }
  auto r = TraceReader::open(path);
  ASSERT_TRUE(r);
  auto present = torch_ops_present(*r);
  ASSERT_TRUE(present);
  EXPECT_FALSE(*present);
  auto rows = load_torch_op_rows(*r);
  ASSERT_TRUE(rows);
  EXPECT_TRUE(rows->ops.empty());
}

TEST(TorchOpRows, KinetoNamesOfCopiesAndMemsets) {
  EXPECT_EQ(torch_memcpy_name(2, 2, 1), "Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(torch_memcpy_name(8, 2, 2), "Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(torch_memcpy_name(99, 99, 7), "Memcpy Unknown (Unknown -> Unknown)");
  EXPECT_EQ(torch_memset_name(2), "Memset (Device)");
}

}  // namespace
}  // namespace strata::store
