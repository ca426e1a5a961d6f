// Round trips through TraceWriter/TraceReader and the writer's file handling.
#include "store/trace_db.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "test_util.h"

namespace strata::store {
namespace {

using testing::TempDir;

int64_t count_entries(const std::filesystem::path& dir) {
  int64_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(TraceDb, RoundTripsRunBenchRunsKernelsAndCounters) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  auto written = testing::write_sample_trace(path, 50);

  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->kind(), TraceKind::kStrata);
  EXPECT_EQ(reader->schema_version(), std::to_string(kSchemaVersion));

  auto run = reader->run();
  ASSERT_TRUE(run.has_value());
  RunInfo expected = testing::sample_run();
  EXPECT_EQ(run->verb, expected.verb);
  EXPECT_EQ(run->command, expected.command);
  EXPECT_EQ(run->working_directory, expected.working_directory);
  EXPECT_EQ(run->start_ns, expected.start_ns);
  EXPECT_EQ(run->end_ns, expected.end_ns);
  EXPECT_EQ(run->exit_status, expected.exit_status);
  EXPECT_EQ(run->signal, expected.signal);
  EXPECT_EQ(run->host, expected.host);
  EXPECT_EQ(run->tool_version, expected.tool_version);
  EXPECT_EQ(run->schema_version, kSchemaVersion);

  auto bench = reader->bench_runs();
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  auto expected_bench = testing::sample_bench_runs();
  ASSERT_EQ(bench->size(), expected_bench.size());
  for (size_t i = 0; i < bench->size(); ++i) {
    const BenchRun& got = (*bench)[i];
    const BenchRun& want = expected_bench[i];
    EXPECT_EQ(got.label, want.label);
    EXPECT_EQ(got.command, want.command);
    EXPECT_EQ(got.iteration, want.iteration);
    EXPECT_EQ(got.warmup, want.warmup);
    EXPECT_EQ(got.wall_ns, want.wall_ns);
    EXPECT_EQ(got.user_ns, want.user_ns);
    EXPECT_EQ(got.sys_ns, want.sys_ns);
    EXPECT_EQ(got.max_rss_kb, want.max_rss_kb);
    EXPECT_EQ(got.minor_faults, want.minor_faults);
    EXPECT_EQ(got.major_faults, want.major_faults);
    EXPECT_EQ(got.exit_status, want.exit_status);
    EXPECT_EQ(got.signal, want.signal);
    EXPECT_EQ(got.metrics, want.metrics);
  }

  auto kernels = reader->kernels();
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  ASSERT_EQ(kernels->size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    const KernelRow& got = (*kernels)[i];
    const KernelRow& want = written[i];
    EXPECT_EQ(got.start, want.start);
    EXPECT_EQ(got.end, want.end);
    EXPECT_EQ(got.device_id, want.device_id);
    EXPECT_EQ(got.correlation_id, want.correlation_id);
    EXPECT_EQ(got.global_pid, want.global_pid);
    EXPECT_EQ(got.demangled_name, want.demangled_name);
    EXPECT_EQ(got.short_name, want.short_name);
    EXPECT_EQ(got.mangled_name, want.mangled_name);
    EXPECT_EQ(got.grid_x, want.grid_x);
    EXPECT_EQ(got.grid_y, want.grid_y);
    EXPECT_EQ(got.block_x, want.block_x);
    EXPECT_EQ(got.registers_per_thread, want.registers_per_thread);
    EXPECT_EQ(got.static_shared_memory, want.static_shared_memory);
    EXPECT_EQ(got.dynamic_shared_memory, want.dynamic_shared_memory);
    EXPECT_EQ(got.shared_memory_executed, want.shared_memory_executed);
    EXPECT_EQ(got.local_memory_per_thread, want.local_memory_per_thread);
    EXPECT_EQ(got.local_memory_total, want.local_memory_total);
    EXPECT_EQ(got.grid_id, want.grid_id);
    EXPECT_EQ(got.graph_node_id, want.graph_node_id);
    EXPECT_EQ(got.graph_id, want.graph_id);
  }

  auto counters = reader->counters();
  ASSERT_TRUE(counters.ok());
  ASSERT_EQ(counters->size(), 1u);
  EXPECT_EQ((*counters)[0].first, "agent.records_dropped");
  EXPECT_EQ((*counters)[0].second, 5);

  auto tables = reader->tables();
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  auto rows_of = [&](const std::string& name) -> int64_t {
    for (const auto& t : *tables) {
      if (t.name == name) return t.rows;
    }
    return -1;
  };
  EXPECT_EQ(rows_of("CUPTI_ACTIVITY_KIND_KERNEL"), 50);
  EXPECT_EQ(rows_of("StringIds"), 3);
  EXPECT_EQ(rows_of("strata_run"), 1);
  EXPECT_EQ(rows_of("strata_bench_runs"), 4);
  EXPECT_EQ(rows_of("strata_bench_metrics"), 8);
  EXPECT_EQ(rows_of("strata_kernel_graphs"), 10);
  EXPECT_EQ(rows_of("NVTX_EVENTS"), 0);
  EXPECT_EQ(rows_of("strata_cpu_samples"), 0);
}

// strata_bench_runs gained its fault columns within schema v2: a file
// written before has none, and its runs read back without faults.
TEST(TraceDb, BenchRunsFromBeforeTheFaultColumnsReadWithoutFaults) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  testing::make_sqlite(path,
                       "ALTER TABLE strata_bench_runs DROP COLUMN minor_faults;"
                       "ALTER TABLE strata_bench_runs DROP COLUMN major_faults;");
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto bench = reader->bench_runs();
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  ASSERT_EQ(bench->size(), testing::sample_bench_runs().size());
  for (const BenchRun& run : *bench) {
    EXPECT_FALSE(run.minor_faults.has_value());
    EXPECT_FALSE(run.major_faults.has_value());
    EXPECT_GT(run.wall_ns, 0);
  }
}

TEST(TraceDb, MetadataNamesStrataAndTheMirroredNsysSchema) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.ok());
  auto meta = reader->export_metadata();
  ASSERT_TRUE(meta.ok());
  std::map<std::string, std::string> m(meta->begin(), meta->end());
  EXPECT_EQ(m["EXPORT_PRODUCT_NAME"], "strata");
  EXPECT_EQ(m["EXPORT_SCHEMA_VERSION"], "3.20.3");
  EXPECT_EQ(m["STRATA_SCHEMA_VERSION"], std::to_string(kSchemaVersion));
}

TEST(TraceDb, InternReturnsOneIdPerString) {
  TempDir dir;
  auto writer = TraceWriter::create(dir.file("t.sqlite"), false);
  ASSERT_TRUE(writer.ok());
  int64_t a = writer->intern("a").value();
  int64_t b = writer->intern("b").value();
  EXPECT_NE(a, b);
  EXPECT_EQ(writer->intern("a").value(), a);
}

TEST(TraceDb, TraceWithoutRunReadsBackWithVersionFromMetadata) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  auto writer = TraceWriter::create(path, false);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->commit().ok());
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->schema_version(), std::to_string(kSchemaVersion));
  EXPECT_FALSE(reader->run().has_value());
}

TEST(TraceDb, RefusesToOverwriteUnlessAsked) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_bytes(path, "precious");
  auto refused = TraceWriter::create(path, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, path + " exists; use --force to overwrite");
  EXPECT_EQ(testing::read_bytes(path), "precious");

  auto writer = TraceWriter::create(path, true);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  EXPECT_EQ(testing::read_bytes(path), "precious");  // untouched until commit
  ASSERT_TRUE(writer->commit().ok());
  EXPECT_TRUE(TraceReader::open(path).ok());
}

TEST(TraceDb, CommitRefusesAFileThatAppearedMeanwhile) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  auto writer = TraceWriter::create(path, false);
  ASSERT_TRUE(writer.ok());
  testing::write_bytes(path, "late");
  auto committed = writer->commit();
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error().message, path + " exists; use --force to overwrite");
  EXPECT_EQ(testing::read_bytes(path), "late");
}

TEST(TraceDb, TemporaryFileIsRemovedWithoutCommit) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  {
    auto writer = TraceWriter::create(path, false);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->write_run(testing::sample_run()).ok());
    EXPECT_EQ(count_entries(dir.path()), 1);  // the temporary file
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  EXPECT_EQ(count_entries(dir.path()), 0);
}

TEST(TraceDb, CommitLeavesOnlyTheFinalFile) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 3);
  EXPECT_EQ(count_entries(dir.path()), 1);
  EXPECT_TRUE(std::filesystem::exists(path));
}

TEST(TraceDb, WritesAfterCommitAreErrors) {
  TempDir dir;
  auto writer = TraceWriter::create(dir.file("t.sqlite"), false);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->commit().ok());
  EXPECT_FALSE(writer->commit().ok());
  EXPECT_FALSE(writer->write_run(testing::sample_run()).ok());
  EXPECT_FALSE(writer->intern("x").ok());
}

TEST(TraceDb, CreateInMissingDirectoryIsAnError) {
  TempDir dir;
  auto writer = TraceWriter::create(dir.file("no/such/dir/t.sqlite"), false);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.error().message.find("no/such/dir/t.sqlite"), std::string::npos);
}

TEST(TraceDb, ReaderNeverModifiesTheFile) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 20);
  std::string before = testing::read_bytes(path);
  {
    auto reader = TraceReader::open(path);
    ASSERT_TRUE(reader.ok());
    ASSERT_TRUE(reader->tables().ok());
    ASSERT_TRUE(reader->kernels().ok());
  }
  EXPECT_EQ(testing::read_bytes(path), before);
  EXPECT_EQ(count_entries(dir.path()), 1);
}

class ChooseOutputPath : public ::testing::Test {
 protected:
  void SetUp() override {
    old_ = std::filesystem::current_path();
    std::filesystem::current_path(dir_.path());
  }
  void TearDown() override { std::filesystem::current_path(old_); }
  TempDir dir_;
  std::filesystem::path old_;
};

TEST_F(ChooseOutputPath, NumbersFromOneAndSkipsTakenNames) {
  EXPECT_EQ(choose_output_path(std::nullopt, false, "strata").value(), "strata1.sqlite");
  testing::write_bytes("strata1.sqlite", "");
  testing::write_bytes("strata3.sqlite", "");
  EXPECT_EQ(choose_output_path(std::nullopt, false, "strata").value(), "strata2.sqlite");
  testing::write_bytes("strata2.sqlite", "");
  EXPECT_EQ(choose_output_path(std::nullopt, false, "strata").value(), "strata4.sqlite");
}

TEST_F(ChooseOutputPath, RequestedPathNeedsForceWhenItExists) {
  EXPECT_EQ(choose_output_path(std::string("out.sqlite"), false, "strata").value(), "out.sqlite");
  testing::write_bytes("out.sqlite", "x");
  auto refused = choose_output_path(std::string("out.sqlite"), false, "strata");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "out.sqlite exists; use --force to overwrite");
  EXPECT_EQ(choose_output_path(std::string("out.sqlite"), true, "strata").value(), "out.sqlite");
}

TEST_F(ChooseOutputPath, DanglingSymlinkCountsAsTaken) {
  std::filesystem::create_symlink("nowhere", "strata1.sqlite");
  EXPECT_EQ(choose_output_path(std::nullopt, false, "strata").value(), "strata2.sqlite");
}

}  // namespace
}  // namespace strata::store
