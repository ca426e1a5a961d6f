// Ingest of the kernel chunks (spool format 1.1) into strata_kernel_metrics
// and strata_kernels_seen, and the store's reader of both: values come back
// bit for bit, a launch without metrics keeps its row, kernels-seen keeps the
// latest (largest) count per name, and a damaged chunk is skipped and counted.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "../report/anchor_kernel.h"
#include "../store/test_util.h"
#include "format/spool_writer.h"
#include "import/cupti_ingest.h"
#include "store/kernel_metric_rows.h"
#include "store/trace_db.h"

namespace {

using strata::store::testing::TempDir;

// A spool of two profiled launches (one failed, no metrics at all) and two
// kernels-seen snapshots, the later one with more launches.
std::string write_spool(const TempDir& dir) {
  std::string path = dir.file("spool-1.bin");
  auto writer = strata::format::SpoolWriter::open(path);
  EXPECT_TRUE(writer.ok());
  EXPECT_TRUE(strata::testing::append_anchor_seen(*writer, 1));
  EXPECT_TRUE(strata::testing::append_anchor_launch(*writer, 0));
  strata::format::KernelMetricsHeader failed;
  failed.status = strata::testing::kInsufficientPrivileges;
  failed.invocation = 1;
  EXPECT_TRUE(writer->append_kernel_metrics(failed, strata::testing::kAnchorKernel, {}));
  EXPECT_TRUE(strata::testing::append_anchor_seen(*writer, 2));
  EXPECT_TRUE(writer->close());
  return path;
}

strata::import::IngestStats ingest(const std::vector<std::string>& spools,
                                   const std::string& trace) {
  auto writer = strata::store::TraceWriter::create(trace, true);
  EXPECT_TRUE(writer) << writer.error().message;
  strata::store::RunInfo run;
  run.verb = "kernels";
  EXPECT_TRUE(writer->write_run(run));
  auto stats = strata::import::ingest_spools(spools, *writer);
  EXPECT_TRUE(stats) << stats.error().message;
  EXPECT_TRUE(writer->commit());
  return stats ? *stats : strata::import::IngestStats{};
}

TEST(KernelIngest, LaunchesAndSeenComeBack) {
  TempDir dir;
  std::string trace = dir.file("t.sqlite");
  auto stats = ingest({write_spool(dir)}, trace);
  EXPECT_EQ(stats.profiled_launches, 2u);
  EXPECT_EQ(stats.kernel_names_seen, 2u);
  auto reader = strata::store::TraceReader::open(trace);
  ASSERT_TRUE(reader) << reader.error().message;
  auto launches = strata::store::read_profiled_launches(*reader);
  ASSERT_TRUE(launches) << launches.error().message;
  ASSERT_EQ(launches->size(), 2u);
  const auto& ok = (*launches)[0];
  EXPECT_EQ(ok.kernel_name, strata::testing::kAnchorKernel);
  EXPECT_EQ(ok.status, 0);
  EXPECT_EQ(ok.correlation_id, 1000);
  EXPECT_EQ(ok.invocation, 0);
  EXPECT_EQ(ok.end_ns - ok.start_ns, 250'000);
  size_t expected = strata::testing::anchor_counter_metrics().size() +
                    strata::testing::anchor_launch_metrics().size();
  ASSERT_EQ(ok.metrics.size(), expected);
  EXPECT_EQ(ok.metrics[0].first, "gpu__time_duration.sum");
  EXPECT_EQ(ok.metrics[0].second, 7776);
  EXPECT_EQ(ok.metrics[8].second, 1462.666667);  // sm__cycles_active.avg, exact
  const auto& failed = (*launches)[1];
  EXPECT_EQ(failed.status, 35);
  EXPECT_EQ(failed.invocation, 1);
  EXPECT_TRUE(failed.metrics.empty());

  auto seen = strata::store::read_kernels_seen(*reader);
  ASSERT_TRUE(seen);
  ASSERT_EQ(seen->size(), 2u);
  EXPECT_EQ((*seen)[0].kernel_name, strata::testing::kOtherKernel);  // 3 launches
  EXPECT_EQ((*seen)[0].launches, 3);
  EXPECT_EQ((*seen)[1].kernel_name, strata::testing::kAnchorKernel);
  EXPECT_EQ((*seen)[1].launches, 2);  // the later snapshot's count
}

TEST(KernelIngest, AMetricCuptiCouldNotEvaluateIsLeftOutNotZero) {
  TempDir dir;
  std::string path = dir.file("spool-1.bin");
  {
    auto writer = strata::format::SpoolWriter::open(path);
    ASSERT_TRUE(writer.ok());
    const strata::format::MetricValue values[] = {
        {"gpu__time_duration.sum", 7776},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", std::nan("")}};
    strata::format::KernelMetricsHeader header;
    EXPECT_TRUE(writer->append_kernel_metrics(header, strata::testing::kAnchorKernel, values));
    EXPECT_TRUE(writer->close());
  }
  std::string trace = dir.file("t.sqlite");
  ingest({path}, trace);
  auto reader = strata::store::TraceReader::open(trace);
  ASSERT_TRUE(reader) << reader.error().message;
  auto launches = strata::store::read_profiled_launches(*reader);
  ASSERT_TRUE(launches) << launches.error().message;
  ASSERT_EQ(launches->size(), 1u);
  ASSERT_EQ((*launches)[0].metrics.size(), 1u);
  EXPECT_EQ((*launches)[0].metrics[0].first, "gpu__time_duration.sum");
}

TEST(KernelIngest, DamagedChunkIsSkippedAndCounted) {
  TempDir dir;
  std::string path = write_spool(dir);
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Flip a byte inside the first kernel-metrics payload (its name): the
  // CRC fails, the chunk is dropped, the others are kept.
  std::string needle = strata::testing::kAnchorKernel.substr(0, 20);
  size_t first_seen = std::string(bytes.begin(), bytes.end()).find(needle);
  size_t at = std::string(bytes.begin(), bytes.end()).find(needle, first_seen + 1);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] ^= 0x20;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string trace = dir.file("t.sqlite");
  auto stats = ingest({path}, trace);
  EXPECT_GE(stats.damaged_chunks, 1u);
  auto reader = strata::store::TraceReader::open(trace);
  ASSERT_TRUE(reader);
  auto launches = strata::store::read_profiled_launches(*reader);
  ASSERT_TRUE(launches);
  ASSERT_EQ(launches->size(), 1u);
  EXPECT_EQ((*launches)[0].status, 35);
  auto counters = reader->counters();
  ASSERT_TRUE(counters);
  bool crc = false;
  for (const auto& [name, value] : *counters) crc |= name == "spool.crc_failures" && value >= 1;
  EXPECT_TRUE(crc);
}

TEST(KernelIngest, TracesWithoutTheTablesReadEmpty) {
  TempDir dir;
  std::string trace = dir.file("t.sqlite");
  ingest({}, trace);
  auto reader = strata::store::TraceReader::open(trace);
  ASSERT_TRUE(reader);
  EXPECT_TRUE(strata::store::read_profiled_launches(*reader)->empty());
  EXPECT_TRUE(strata::store::read_kernels_seen(*reader)->empty());
}

}  // namespace
