// Each kind of bad input gives one line naming the file and the problem.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/trace_db.h"
#include "test_util.h"

namespace strata::store {
namespace {

using testing::TempDir;

std::string open_error(const std::string& path) {
  auto reader = TraceReader::open(path);
  if (reader.ok()) return "(opened)";
  const std::string& message = reader.error().message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
  return message;
}

TEST(BadInput, MissingFile) {
  TempDir dir;
  std::string path = dir.file("absent.sqlite");
  EXPECT_EQ(open_error(path), path + ": no such file");
}

TEST(BadInput, Directory) {
  TempDir dir;
  EXPECT_EQ(open_error(dir.path().string()), dir.path().string() + ": is a directory");
}

TEST(BadInput, EmptyFile) {
  TempDir dir;
  std::string path = dir.file("empty.sqlite");
  testing::write_bytes(path, "");
  EXPECT_EQ(open_error(path), path + ": empty file, not an SQLite database");
}

TEST(BadInput, NotSqlite) {
  TempDir dir;
  std::string path = dir.file("text.sqlite");
  testing::write_bytes(path, "name,value\nelapsed_ms,12.5\n");
  EXPECT_EQ(open_error(path), path + ": not an SQLite database");
  testing::write_bytes(path, std::string("SQLite format 2\0 and more", 25));
  EXPECT_EQ(open_error(path), path + ": not an SQLite database");
}

TEST(BadInput, TruncatedAtHalf) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 2000);
  std::string bytes = testing::read_bytes(path);
  testing::write_bytes(path, bytes.substr(0, bytes.size() / 2));
  std::string message = open_error(path);
  EXPECT_NE(message.find("truncated SQLite database"), std::string::npos) << message;
}

TEST(BadInput, TruncatedInsideTheHeader) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  testing::write_bytes(path, testing::read_bytes(path).substr(0, 40));
  EXPECT_EQ(open_error(path), path + ": truncated SQLite database (40 bytes)");
}

TEST(BadInput, TruncatedToAPartialPage) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  testing::write_bytes(path, testing::read_bytes(path).substr(0, 300));
  std::string message = open_error(path);
  EXPECT_NE(message.find("truncated SQLite database"), std::string::npos) << message;
}

TEST(BadInput, NewerSchemaVersion) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  testing::make_sqlite(path, "UPDATE strata_run SET schema_version = 9");
  EXPECT_EQ(open_error(path),
            path + ": strata schema version 9 is newer than this strata reads (2)");
}

TEST(BadInput, NewerSchemaVersionWithoutRun) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  auto writer = TraceWriter::create(path, false);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->commit().ok());
  testing::make_sqlite(
      path, "UPDATE META_DATA_EXPORT SET value = '7' WHERE name = 'STRATA_SCHEMA_VERSION'");
  EXPECT_EQ(open_error(path),
            path + ": strata schema version 7 is newer than this strata reads (2)");
}

TEST(BadInput, BadSchemaVersion) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  testing::make_sqlite(path, "UPDATE strata_run SET schema_version = 0");
  EXPECT_EQ(open_error(path), path + ": unknown strata schema version 0");
}

TEST(BadInput, BadCommandColumn) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  testing::make_sqlite(path, "UPDATE strata_run SET command = '{\"not\": 1}'");
  EXPECT_EQ(open_error(path), path + ": strata_run.command is not a JSON array of strings");
}

TEST(BadInput, SqliteButNotATrace) {
  TempDir dir;
  std::string path = dir.file("other.sqlite");
  testing::make_sqlite(path,
                       "CREATE TABLE notes (id INTEGER, text TEXT); "
                       "INSERT INTO notes VALUES (1, 'hello');");
  EXPECT_EQ(open_error(path), path + ": not a strata trace or Nsight Systems export");
}

TEST(BadInput, CorruptPageIsReportedByTables) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 20000);
  std::string bytes = testing::read_bytes(path);
  // Garbage over the back half of the file, where kernel rows live; the
  // header (and so the page count) stays valid.
  for (size_t i = bytes.size() / 2; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5 ^ i);
  testing::write_bytes(path, bytes);
  auto reader = TraceReader::open(path);
  if (!reader.ok()) {
    EXPECT_NE(reader.error().message.find("corrupt"), std::string::npos);
    return;
  }
  auto tables = reader->tables();
  ASSERT_FALSE(tables.ok());
  EXPECT_EQ(tables.error().message.rfind(path + ": corrupt or truncated SQLite database", 0), 0u)
      << tables.error().message;
  EXPECT_EQ(tables.error().message.find('\n'), std::string::npos);
}

TEST(NsysExport, IsRecognizedAndCounted) {
  TempDir dir;
  std::string path = dir.file("report1.sqlite");
  testing::make_sqlite(path, testing::read_bytes(STRATA_NSYS_SCHEMA_SQL) +
                                 "INSERT INTO META_DATA_EXPORT VALUES "
                                 "('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'), "
                                 "('EXPORT_PRODUCT_VERSION', '2025.3.2'), "
                                 "('EXPORT_SCHEMA_VERSION', '3.20.3');"
                                 "INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel');"
                                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, "
                                 "contextId, streamId, demangledName, shortName, "
                                 "registersPerThread, gridX, gridY, gridZ, blockX, blockY, "
                                 "blockZ, staticSharedMemory, dynamicSharedMemory, "
                                 "localMemoryPerThread, localMemoryTotal, gridId) VALUES "
                                 "(1, 2, 0, 1, 7, 1, 1, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1);");
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->kind(), TraceKind::kNsysExport);
  EXPECT_EQ(reader->schema_version(), "3.20.3");
  EXPECT_FALSE(reader->run().has_value());
  auto tables = reader->tables();
  ASSERT_TRUE(tables.ok());
  int64_t kernels = -1, strings = -1;
  for (const auto& t : *tables) {
    if (t.name == "CUPTI_ACTIVITY_KIND_KERNEL") kernels = t.rows;
    if (t.name == "StringIds") strings = t.rows;
  }
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(strings, 2);
  auto bench = reader->bench_runs();
  ASSERT_TRUE(bench.ok());
  EXPECT_TRUE(bench->empty());
  auto rows = reader->kernels();
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_EQ(rows->size(), 1u);
}

TEST(NsysExport, CuptiTablesWithoutMetadataAreEnough) {
  TempDir dir;
  std::string path = dir.file("partial.sqlite");
  testing::make_sqlite(path, "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER);");
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->kind(), TraceKind::kNsysExport);
  EXPECT_EQ(reader->schema_version(), "unknown");
}

}  // namespace
}  // namespace strata::store
