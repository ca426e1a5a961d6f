// The multi-rank path through real files: synthetic rank traces written with
// the store's TraceWriter, strata_ranks read back, the GPU tables loaded as
// `strata report a b` loads them, analysed and rendered.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/multi_rank.h"
#include "analysis/rank_input.h"
#include "rank_trace_writer.h"
#include "report/multi_rank_report.h"
#include "store/gpu_tables.h"
#include "store/rank_rows.h"
#include "trace_builder.h"

namespace strata {
namespace {

constexpr int64_t kMs = 1'000'000;

// As `strata report a b` loads each file.
analysis::RankInput load(const std::string& path) {
  auto file = store::load_rank_file(path);
  EXPECT_TRUE(file.ok()) << file.error().message;
  return analysis::rank_input(file.ok() ? std::move(file).value() : store::RankFile{});
}

TEST(MultiRankStore, LoadRankFileReadsHostRowAndKernels) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  testing::SyntheticRank s;
  s.rank = 3;
  s.world_size = 4;
  s.kernels.push_back({"k", 10, 20, 0});
  testing::write_rank_trace(path, s);
  auto file = store::load_rank_file(path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(file->host, "node0");
  ASSERT_TRUE(file->row);
  EXPECT_EQ(file->row->rank, 3);
  EXPECT_EQ(file->gpu.kernels.size(), 1u);
  EXPECT_EQ(file->gpu.kernels.device_id.size(), 1u);  // loaded with links
  auto in = analysis::rank_input(std::move(file).value());
  EXPECT_EQ(in.rank, 3);
  EXPECT_EQ(in.world_size, 4);
  EXPECT_EQ(in.launcher, "torchrun");
  EXPECT_EQ(in.boot_id, "0b0b0b0b-boot");
  ASSERT_TRUE(in.clock);
  EXPECT_EQ(in.clock->error_ns, 40);
  EXPECT_EQ(in.gpu.kernels.size(), 1u);

  auto missing = store::load_rank_file(dir.file("none.sqlite"));
  EXPECT_FALSE(missing.ok());
}

TEST(MultiRankStore, LoadRankFilePrefersTheWholeCommandsRow) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  {
    auto writer = store::TraceWriter::create(path, true);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    store::RankRow process;  // one process of the command, first in the file
    process.global_pid = int64_t{7} << 24;
    process.rank = 1;
    ASSERT_TRUE(store::write_rank_row(*writer, process).ok());
    store::RankRow whole;  // strata ran inside the rank: the whole command
    whole.rank = 2;
    ASSERT_TRUE(store::write_rank_row(*writer, whole).ok());
    ASSERT_TRUE(writer->commit().ok());
  }
  auto file = store::load_rank_file(path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_TRUE(file->row);
  EXPECT_EQ(file->row->rank, 2);
  EXPECT_EQ(file->host, "");  // no run recorded
}

TEST(MultiRankStore, RankInputOfAFileWithoutRowsKnowsNoRank) {
  store::RankFile file;
  file.source = "x.sqlite";
  file.host = "h";
  auto in = analysis::rank_input(std::move(file));
  EXPECT_EQ(in.source, "x.sqlite");
  EXPECT_EQ(in.host, "h");
  EXPECT_FALSE(in.rank);
  EXPECT_FALSE(in.clock);
}

TEST(MultiRankStore, RankRowRoundTrips) {
  testing::ScratchDir dir;
  auto ranks = testing::two_ranks_planted_straggler(50 * kMs);
  std::string path = dir.file("r1.sqlite");
  testing::write_rank_trace(path, ranks[1]);
  auto reader = store::TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->schema_version(), std::to_string(store::kSchemaVersion));
  auto rows = store::read_rank_rows(*reader);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const auto& r = rows->front();
  EXPECT_FALSE(r.global_pid);
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.world_size, 2);
  EXPECT_FALSE(r.local_world_size);
  EXPECT_EQ(r.launcher, "torchrun");
  EXPECT_EQ(r.job_id, "job1");
  ASSERT_EQ(r.variables.size(), 1u);
  EXPECT_EQ(r.variables[0].first, "RANK");
  EXPECT_EQ(r.variables[0].second, "1");
  EXPECT_EQ(r.boot_id, "0b0b0b0b-boot");
  EXPECT_EQ(r.clock_monotonic_ns, 1'000'000'000);
  EXPECT_EQ(r.clock_realtime_ns, 1'700'000'000'000'000'000);
  EXPECT_EQ(r.clock_error_ns, 40);
}

TEST(MultiRankStore, NsysExportHasNoRankRows) {
  testing::ScratchDir dir;
  std::string path = dir.file("nsys.sqlite");
  { testing::TraceBuilder b(path, testing::kWithStringIds | testing::kWithKernels); }
  auto reader = store::TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto rows = store::read_rank_rows(*reader);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_TRUE(rows->empty());
}

TEST(MultiRankStore, PlantedStragglerThroughFiles) {
  testing::ScratchDir dir;
  auto ranks = testing::two_ranks_planted_straggler(50 * kMs);
  std::vector<analysis::RankInput> inputs;
  for (int r = 0; r < 2; ++r) {
    std::string path = dir.file("trace-" + std::to_string(r) + ".sqlite");
    testing::write_rank_trace(path, ranks[r]);
    inputs.push_back(load(path));
  }
  auto result = analysis::analyze_ranks(inputs);
  ASSERT_EQ(result.ranks.size(), 2u);
  for (const auto& s : result.ranks) {
    EXPECT_EQ(s.kernels, 6);
    EXPECT_EQ(s.communication_kernels, 3);
    EXPECT_EQ(s.compute_kernels, 3);
    EXPECT_EQ(s.memops, 1);
  }
  ASSERT_EQ(result.collectives.size(), 3u);
  ASSERT_TRUE(result.worst);
  EXPECT_EQ(result.ranks[*result.worst].label, "1");
  const auto& second = result.collectives[1];
  EXPECT_EQ(result.ranks[second.last].label, "1");
  EXPECT_NEAR(static_cast<double>(second.delay_ns), 50.0 * kMs, 5.0 * kMs);
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();

  // The straggler table, longest delay first, in JSON.
  auto collectives = report::collective_sum_report(result, 0);
  auto json = nlohmann::json::parse(report::render_gpu_report(collectives, report::Format::kJson));
  ASSERT_EQ(json.size(), 3u);
  EXPECT_EQ(json[0]["Collective"], "AllReduce");
  EXPECT_EQ(json[0]["Instance"], 2);
  EXPECT_EQ(json[0]["Last Rank"], 1);
  EXPECT_EQ(json[0]["First Rank"], 0);
  EXPECT_EQ(json[0]["Delay (ns)"], 50 * kMs);
  EXPECT_EQ(json[0]["Mean Wait (ns)"], 50 * kMs);
  EXPECT_EQ(json[0]["End Spread (ns)"], 0);

  auto rank_sum = report::rank_sum_report(result, inputs);
  auto ranks_json =
      nlohmann::json::parse(report::render_gpu_report(rank_sum, report::Format::kJson));
  ASSERT_EQ(ranks_json.size(), 2u);
  EXPECT_EQ(ranks_json[0]["Rank"], 0);
  EXPECT_EQ(ranks_json[1]["Rank"], 1);
  EXPECT_EQ(ranks_json[1]["Kernels"], 6);
  EXPECT_EQ(ranks_json[1]["NCCL Kernels"], 3);
  EXPECT_EQ(ranks_json[1]["Devices"], "1");
  EXPECT_EQ(ranks_json[1]["Compute (ns)"], 3 * kMs);
  EXPECT_EQ(ranks_json[0]["Comm Wait (ns)"], 50 * kMs + 40'000);
  EXPECT_EQ(ranks_json[1]["Comm Wait (ns)"], 0);
  // Rank 0 idles between the memcpy and the first kernel (0.5 ms), no more.
  EXPECT_EQ(ranks_json[0]["Idle (ns)"], kMs / 2);

  std::string text =
      report::render_gpu_report(report::straggler_sum_report(result), report::Format::kTable);
  EXPECT_NE(text.find("Worst straggler: rank 1, last at 3 of 3 collectives, 50040000 ns"),
            std::string::npos)
      << text;
  std::string ranks_text = report::render_gpu_report(rank_sum, report::Format::kTable);
  EXPECT_NE(ranks_text.find(" ** Per-Rank GPU Summary (rank_sum):"), std::string::npos);
  EXPECT_NE(ranks_text.find("Clocks: all files from one host"), std::string::npos) << ranks_text;
}

TEST(MultiRankStore, TwoHostsStateTheErrorBound) {
  testing::ScratchDir dir;
  auto ranks = testing::two_ranks_planted_straggler(50 * kMs);
  // Rank 1's host: another boot, its CLOCK_MONOTONIC 5 s behind at the same
  // wall-clock moment.
  ranks[1].host = "node1";
  ranks[1].boot_id = "another-boot";
  ranks[1].clock_monotonic_ns -= 5'000 * kMs;
  ranks[1].clock_error_ns = 60;
  for (auto& k : ranks[1].kernels) {
    k.start -= 5'000 * kMs;
    k.end -= 5'000 * kMs;
  }
  for (auto& m : ranks[1].memcpys) {
    m.first -= 5'000 * kMs;
    m.second -= 5'000 * kMs;
  }
  std::vector<analysis::RankInput> inputs;
  for (int r = 0; r < 2; ++r) {
    std::string path = dir.file("trace-" + std::to_string(r) + ".sqlite");
    testing::write_rank_trace(path, ranks[r]);
    inputs.push_back(load(path));
  }
  auto result = analysis::analyze_ranks(inputs);
  EXPECT_EQ(result.clock.method, analysis::ClockMethod::kWallClock);
  EXPECT_EQ(result.clock.error_bound_ns, 100);
  EXPECT_EQ(result.collectives[1].delay_ns, 50 * kMs);
  std::string note = report::clock_note(result);
  EXPECT_NE(note.find("2 hosts"), std::string::npos) << note;
  EXPECT_NE(note.find("error within 100 ns from the sampling"), std::string::npos) << note;
  EXPECT_NE(note.find("NTP"), std::string::npos) << note;
}

}  // namespace
}  // namespace strata
