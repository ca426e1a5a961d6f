// Multi-process runs end to end: output names with %q{VAR}/%p/%h, the rank a
// launcher's variables give recorded in strata_ranks, and
// `strata report a.sqlite b.sqlite` on synthetic rank traces (per-rank
// summaries, the planted straggler, bad inputs).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../gpu_reports/rank_trace_writer.h"
#include "cli_runner.h"
#include "common/process.h"
#include "store/rank_rows.h"
#include "store/trace_db.h"

namespace strata::testing {
namespace {

constexpr int64_t kMs = 1'000'000;

void write_planted(const ScratchDir& dir) {
  auto ranks = two_ranks_planted_straggler(50 * kMs);
  for (int r = 0; r < 2; ++r) {
    write_rank_trace((dir.path() / ("trace-" + std::to_string(r) + ".sqlite")).string(), ranks[r]);
  }
}

TEST(MultiRankCli, UnsetVariableInOutputNameExits2WithOneLine) {
  ScratchDir dir;
  auto r = run_strata("bench -n 1 --warmup 0 -q -o 'b-%q{STRATA_TEST_UNSET_VAR}-%h.sqlite' -- true",
                      dir.path());
  ASSERT_EQ(r.status, 2) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0],
            "strata: output name 'b-%q{STRATA_TEST_UNSET_VAR}-%h.sqlite': environment variable "
            "STRATA_TEST_UNSET_VAR is not set");
}

TEST(MultiRankCli, RankVariablesAreRecorded) {
  ScratchDir dir;
  std::string cmd = "cd '" + dir.path().string() +
                    "' && env -u RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u PMIX_RANK "
                    "SLURM_PROCID=3 SLURM_LOCALID=1 SLURM_NTASKS=4 SLURM_JOB_ID=77 " +
                    std::string(STRATA_BIN) +
                    " bench -n 1 --warmup 0 -q -o 'b-%q{SLURM_PROCID}-%h-%%.sqlite' -- true";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto path = dir.path() / ("b-3-" + host_name() + "-%.sqlite");
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  auto reader = store::TraceReader::open(path.string());
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto rows = store::read_rank_rows(*reader);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  const auto& row = rows->front();
  EXPECT_EQ(row.launcher, "slurm");
  EXPECT_EQ(row.rank, 3);
  EXPECT_EQ(row.local_rank, 1);
  EXPECT_EQ(row.world_size, 4);
  EXPECT_EQ(row.job_id, "77");
  EXPECT_FALSE(row.boot_id.empty());
  EXPECT_GT(row.clock_monotonic_ns, 0);
  EXPECT_GT(row.clock_realtime_ns, row.clock_monotonic_ns);
  EXPECT_GE(row.clock_error_ns, 0);
  EXPECT_LT(row.clock_error_ns, 1'000'000);
  auto run = reader->run();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->start_ns, row.clock_realtime_ns);
}

TEST(MultiRankCli, PidSpecifierAndPlainNames) {
  ScratchDir dir;
  auto r = run_strata("bench -n 1 --warmup 0 -q -o 'p-%p.sqlite' -- true", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    std::string name = entry.path().filename().string();
    if (name.rfind("p-", 0) == 0 && name.size() > 9 && name.find('%') == std::string::npos) ++found;
  }
  EXPECT_EQ(found, 1);
  // A run outside any launcher still records its clock pair, with no rank.
  r = run_strata("bench -n 1 --warmup 0 -q -o plain.sqlite -- true", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto reader = store::TraceReader::open((dir.path() / "plain.sqlite").string());
  ASSERT_TRUE(reader.ok());
  auto rows = store::read_rank_rows(*reader);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
}

TEST(MultiRankCli, UnknownSpecifierExits2WithOneLine) {
  ScratchDir dir;
  auto r = run_strata("bench -n 1 --warmup 0 -q -o 'x-%z.sqlite' -- true", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0],
            "strata: output name 'x-%z.sqlite': unknown specifier %z (known: %q{VAR}, %p, %h, %%)");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(MultiRankCli, ReportOfTwoRanksNamesTheStraggler) {
  ScratchDir dir;
  write_planted(dir);
  auto r = run_strata("report trace-0.sqlite trace-1.sqlite", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find(" ** Per-Rank GPU Summary (rank_sum):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ** NCCL Collectives, Longest Delay First (collective_sum):"),
            std::string::npos);
  EXPECT_NE(r.out.find(" ** Stragglers per Rank (straggler_sum):"), std::string::npos);
  EXPECT_NE(r.out.find("Worst straggler: rank 1, last at 3 of 3 collectives"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Clocks: all files from one host"), std::string::npos);
}

TEST(MultiRankCli, JsonStragglerTable) {
  ScratchDir dir;
  write_planted(dir);
  auto r = run_strata("report trace-*.sqlite --report collective_sum,rank_sum --format json",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  // One document keyed by report name, in the order asked for.
  auto doc = nlohmann::ordered_json::parse(r.out);
  ASSERT_EQ(doc.size(), 2u) << r.out;
  EXPECT_EQ(doc.begin().key(), "collective_sum");
  auto collectives = doc.at("collective_sum");
  auto ranks = doc.at("rank_sum");
  ASSERT_EQ(collectives.size(), 3u);
  EXPECT_EQ(collectives[0]["Last Rank"], 1);
  double delay = collectives[0]["Delay (ns)"];
  EXPECT_NEAR(delay, 50.0 * kMs, 5.0 * kMs);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0]["Kernels"], 6);
  EXPECT_EQ(ranks[1]["Kernels"], 6);
  EXPECT_EQ(ranks[0]["NCCL Kernels"], 3);
  // Notes go to stderr in JSON mode.
  EXPECT_NE(r.err.find("strata: Clocks:"), std::string::npos) << r.err;
}

TEST(MultiRankCli, NotATraceAmongTheFilesExits2) {
  ScratchDir dir;
  write_planted(dir);
  {
    std::ofstream junk(dir.path() / "junk.sqlite");
    junk << "not a database at all\n";
  }
  auto r = run_strata("report trace-0.sqlite junk.sqlite", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("junk.sqlite"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = run_strata("report trace-0.sqlite missing.sqlite", dir.path());
  EXPECT_EQ(r.status, 2);
}

TEST(MultiRankCli, DuplicatedRanksWarn) {
  ScratchDir dir;
  write_planted(dir);
  std::filesystem::copy_file(dir.path() / "trace-1.sqlite", dir.path() / "again-1.sqlite");
  auto r = run_strata("report trace-0.sqlite trace-1.sqlite again-1.sqlite", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("strata: warning: rank 1 is in 2 files (trace-1.sqlite, again-1.sqlite)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("1 (again-1.sqlite)"), std::string::npos) << r.out;
}

TEST(MultiRankCli, UnknownReportWithSeveralFilesExits2) {
  ScratchDir dir;
  write_planted(dir);
  auto r = run_strata("report trace-0.sqlite trace-1.sqlite --report cuda_api_sum", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("rank_sum, collective_sum, straggler_sum"), std::string::npos) << r.err;
}

TEST(MultiRankCli, OneFileKeepsTheSingleFileReports) {
  ScratchDir dir;
  write_planted(dir);
  auto r = run_strata("report trace-0.sqlite", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(cuda_gpu_kern_sum):"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("rank_sum"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace strata::testing
