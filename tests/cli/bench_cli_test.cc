// `strata bench` end to end: what it prints, the exit statuses the docs
// promise, and what it stores in the trace.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_runner.h"
#include "store/trace_db.h"

namespace strata::testing {
namespace {

TEST(BenchCli, ComparesTwoCommandsAndStoresEveryRun) {
  ScratchDir dir;
  auto r = run_strata(
      "bench -n 3 --warmup 1 --metric v -o t.sqlite --vs 'sh -c \"echo v=1\"' -- "
      "sh -c 'echo v=2'",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("v=2"), std::string::npos) << "the program's output passes through";
  EXPECT_NE(r.out.find("A/B ratio per pair"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.000x"), std::string::npos) << r.out;  // v: 2 / 1 in every pair

  auto reader = store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto run = reader->run();
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->verb, "bench");
  EXPECT_EQ(run->command, (std::vector<std::string>{"sh", "-c", "echo v=2"}));
  auto runs = reader->bench_runs();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 8u);  // (1 warm-up + 3 runs) x 2 commands
  // Interleaved: A B A B ...
  for (size_t i = 0; i < runs->size(); ++i) {
    EXPECT_EQ((*runs)[i].label, i % 2 == 0 ? "A" : "B") << i;
  }
  EXPECT_TRUE((*runs)[0].warmup);
  EXPECT_FALSE((*runs)[2].warmup);
  ASSERT_EQ((*runs)[2].metrics.size(), 1u);
  EXPECT_EQ((*runs)[2].metrics[0], (std::pair<std::string, double>{"v", 2}));
  EXPECT_EQ((*runs)[3].metrics[0].second, 1);
  EXPECT_GT((*runs)[2].wall_ns, 0);
  EXPECT_GT((*runs)[2].max_rss_kb, 0);
}

TEST(BenchCli, CommandThatCannotStartExits127WithOneLine) {
  ScratchDir dir;
  auto r = run_strata("bench -o t.sqlite -- ./no-such-program --flag", dir.path());
  EXPECT_EQ(r.status, 127);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0],
            "strata: cannot start './no-such-program': No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "t.sqlite"));
}

TEST(BenchCli, FailingAndKilledRunsAreReportedPerRun) {
  ScratchDir dir;
  auto r = run_strata(
      "bench -n 2 --warmup 0 -o t.sqlite --vs \"sh -c 'kill -KILL \\$\\$'\" -- "
      "sh -c 'exit 3'",
      dir.path());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("A run 1: exited with status 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A run 2: exited with status 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("B run 2: killed by signal 9 (SIGKILL)"), std::string::npos) << r.out;
  // Recorded all the same.
  auto reader = store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader.ok());
  auto runs = reader->bench_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 4u);
  EXPECT_EQ((*runs)[0].exit_status, 3);
  EXPECT_EQ((*runs)[1].signal, 9);
}

TEST(BenchCli, RefusesToOverwriteWithoutForce) {
  ScratchDir dir;
  ASSERT_EQ(run_strata("bench -n 1 --warmup 0 -q -o t.sqlite -- true", dir.path()).status, 0);
  auto before = read_file(dir.path() / "t.sqlite");
  auto r = run_strata("bench -n 1 --warmup 0 -q -o t.sqlite -- true", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("t.sqlite"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir.path() / "t.sqlite"), before);
  EXPECT_EQ(run_strata("bench -n 1 --warmup 0 -q --force -o t.sqlite -- true", dir.path()).status,
            0);
}

TEST(BenchCli, DefaultOutputNamesCountUp) {
  ScratchDir dir;
  ASSERT_EQ(run_strata("bench -n 1 --warmup 0 -q -- true", dir.path()).status, 0);
  ASSERT_EQ(run_strata("bench -n 1 --warmup 0 -q -- true", dir.path()).status, 0);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "strata-bench1.sqlite"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "strata-bench2.sqlite"));
}

TEST(BenchCli, QuietDiscardsTheProgramsOutput) {
  ScratchDir dir;
  auto r = run_strata("bench -n 2 -q --metric v -o t.sqlite -- sh -c 'echo v=7; echo oops >&2'",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("\nv=7\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("oops"), std::string::npos);
  EXPECT_NE(r.out.find("7.000"), std::string::npos) << "the metric is still collected: " << r.out;
}

TEST(BenchCli, UsageErrorsExit2) {
  ScratchDir dir;
  for (const char* args :
       {"bench", "bench -n 0 -- true", "bench --format xml -- true", "bench --vs 'a | b' -- true",
        "bench --metric a=b -- true", "bench --no-such-flag -- true"}) {
    auto r = run_strata(args, dir.path());
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("strata: ", 0), 0u) << args << ": " << r.err;
  }
}

TEST(BenchCli, CsvAndJsonFormats) {
  ScratchDir dir;
  auto csv = run_strata("bench -n 2 -q --format csv -o a.sqlite -- true", dir.path());
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("Cmd,Quantity,Unit,Runs,Min,Median,Max\n", 0), 0u) << csv.out;
  auto json = run_strata("bench -n 2 -q --format json -o b.sqlite -- true", dir.path());
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"values\""), std::string::npos) << json.out;
}

}  // namespace
}  // namespace strata::testing
