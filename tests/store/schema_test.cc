// Schema v1 against the facts: every table and column of the reference nsys
// export (tests/store/data/nsys-sqlite-schema.sql, a copy of
// shared/reference/nsys-sqlite-schema.sql) must exist in a new strata file
// with the same name, type, NOT NULL and key, in the same order.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "store/trace_db.h"
#include "test_util.h"

namespace strata::store {
namespace {

using Column = std::tuple<std::string, std::string, int, int>;  // name, type, notnull, pk

std::vector<Column> columns(sqlite3* db, const std::string& table) {
  std::vector<Column> out;
  sqlite3_stmt* stmt = nullptr;
  std::string sql = "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)";
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
  sqlite3_bind_text(stmt, 1, table.c_str(), -1, SQLITE_TRANSIENT);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)),
                     reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)),
                     sqlite3_column_int(stmt, 2), sqlite3_column_int(stmt, 3));
  }
  sqlite3_finalize(stmt);
  return out;
}

std::vector<std::string> tables(sqlite3* db) {
  std::vector<std::string> out;
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1,
                     &stmt, nullptr);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
  }
  sqlite3_finalize(stmt);
  return out;
}

int64_t count(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  int64_t n = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  return n;
}

class Schema : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("t.sqlite");
    testing::write_sample_trace(path_, 1);
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_open(":memory:", &reference_), SQLITE_OK);
    std::string sql = testing::read_bytes(STRATA_NSYS_SCHEMA_SQL);
    ASSERT_FALSE(sql.empty()) << "cannot read " << STRATA_NSYS_SCHEMA_SQL;
    ASSERT_EQ(sqlite3_exec(reference_, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(reference_);
  }
  void TearDown() override {
    sqlite3_close(db_);
    sqlite3_close(reference_);
  }
  testing::TempDir dir_;
  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3* reference_ = nullptr;
};

TEST_F(Schema, HasEveryReferenceTableWithIdenticalColumns) {
  auto reference_tables = tables(reference_);
  ASSERT_GE(reference_tables.size(), 21u);
  for (const auto& table : reference_tables) {
    auto want = columns(reference_, table);
    auto got = columns(db_, table);
    EXPECT_FALSE(got.empty()) << table << " is missing";
    EXPECT_EQ(got, want) << table;
  }
}

TEST_F(Schema, IssueListedNsysTablesArePresent) {
  auto have = tables(db_);
  std::set<std::string> set(have.begin(), have.end());
  for (const char* table :
       {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS",
        "StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE",
        "META_DATA_EXPORT", "ENUM_NSYS_EVENT_CLASS", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
        "ENUM_CUPTI_SYNC_TYPE"}) {
    EXPECT_TRUE(set.count(table)) << table;
  }
}

TEST_F(Schema, NvtxEventsHasTheExportColumns) {
  std::vector<Column> want = {
      {"start", "INTEGER", 1, 0},
      {"end", "INTEGER", 0, 0},
      {"eventType", "INTEGER", 1, 0},
      {"rangeId", "INTEGER", 0, 0},
      {"category", "INTEGER", 0, 0},
      {"color", "INTEGER", 0, 0},
      {"text", "TEXT", 0, 0},
      {"globalTid", "INTEGER", 0, 0},
      {"endGlobalTid", "INTEGER", 0, 0},
      {"textId", "INTEGER", 0, 0},
      {"domainId", "INTEGER", 0, 0},
      {"uint64Value", "INTEGER", 0, 0},
      {"int64Value", "INTEGER", 0, 0},
      {"doubleValue", "REAL", 0, 0},
      {"uint32Value", "INTEGER", 0, 0},
      {"int32Value", "INTEGER", 0, 0},
      {"floatValue", "REAL", 0, 0},
      {"jsonTextId", "INTEGER", 0, 0},
      {"jsonText", "TEXT", 0, 0},
      {"binaryData", "TEXT", 0, 0},
  };
  EXPECT_EQ(columns(db_, "NVTX_EVENTS"), want);
}

TEST_F(Schema, StrataTablesExist) {
  auto have = tables(db_);
  std::set<std::string> set(have.begin(), have.end());
  for (const char* table :
       {"strata_run", "strata_bench_runs", "strata_bench_metrics", "strata_cpu_samples",
        "strata_cpu_stacks", "strata_cpu_frames", "strata_cpu_mappings", "strata_kernel_metrics",
        "strata_kernels_seen", "strata_kernel_graphs", "strata_diagnostics", "strata_counters",
        "strata_ranks", "strata_torch_ops", "strata_torch_status", "strata_external_correlation"}) {
    EXPECT_TRUE(set.count(table)) << table;
  }
}

TEST_F(Schema, EnumTablesHoldNsysValues) {
  EXPECT_EQ(count(db_,
                  "SELECT count(*) FROM ENUM_NSYS_EVENT_CLASS WHERE "
                  "(id = 0 AND name = 'TRACE_PROCESS_EVENT_CUDA_RUNTIME') OR "
                  "(id = 1 AND name = 'TRACE_PROCESS_EVENT_CUDA_DRIVER')"),
            2);
  EXPECT_EQ(count(db_,
                  "SELECT count(*) FROM ENUM_CUDA_MEMCPY_OPER WHERE "
                  "(id = 1 AND name = 'CUDA_MEMCPY_KIND_HTOD') OR "
                  "(id = 2 AND name = 'CUDA_MEMCPY_KIND_DTOH') OR "
                  "(id = 8 AND name = 'CUDA_MEMCPY_KIND_DTOD') OR "
                  "(id = 10 AND name = 'CUDA_MEMCPY_KIND_PTOP')"),
            4);
  EXPECT_EQ(count(db_,
                  "SELECT count(*) FROM ENUM_CUDA_MEM_KIND WHERE "
                  "(id = 0 AND label = 'Pageable') OR (id = 1 AND label = 'Pinned') OR "
                  "(id = 2 AND label = 'Device') OR (id = 4 AND label = 'Managed')"),
            4);
  EXPECT_EQ(count(db_, "SELECT count(*) FROM ENUM_CUPTI_SYNC_TYPE"), 5);
}

TEST_F(Schema, MetadataSaysWhichExportSchemaIsMirrored) {
  EXPECT_EQ(count(db_,
                  "SELECT count(*) FROM META_DATA_EXPORT WHERE "
                  "name = 'EXPORT_SCHEMA_VERSION' AND value = '3.20.3'"),
            1);
}

}  // namespace
}  // namespace strata::store
