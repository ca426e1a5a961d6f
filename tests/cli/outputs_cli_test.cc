// Every file strata writes, end to end (issue 21 items 1, 8, 10): exports
// never write through a symlink and keep the old file on a failed write;
// parallel runs without -o get distinct traces; stale temporaries of killed
// runs are cleared; a bad output or a command that cannot start is refused
// before anything runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "common/atomic_file.h"
#include "common/build_info.h"
#include "store/trace_db.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;

const std::string kCpuTrace = std::string(STRATA_TEST_DATA) + "/cpu-cpu_hotspot-slow/trace.sqlite";

void spit(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(OutputsCli, ExportWithForceReplacesASymlinkAndNeverWritesThroughIt) {
  ScratchDir dir;
  spit(dir.path() / "victim", "secret");
  fs::permissions(dir.path() / "victim", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink("victim", dir.path() / "out.svg");
  auto r = run_strata("export '" + kCpuTrace + "' --format svg --force -o out.svg", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() / "victim"), "secret");
  EXPECT_FALSE(fs::is_symlink(dir.path() / "out.svg"));
  EXPECT_EQ(read_file(dir.path() / "out.svg").rfind("<?xml", 0), 0u);
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"out.svg", "victim"}));
}

TEST(OutputsCli, ExportWithoutForceCountsADanglingSymlinkAsExisting) {
  ScratchDir dir;
  fs::create_symlink("victim", dir.path() / "out.svg");
  auto r = run_strata("export '" + kCpuTrace + "' --format svg -o out.svg", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0], "strata: out.svg exists; use --force to overwrite");
  EXPECT_FALSE(fs::exists(dir.path() / "victim")) << "nothing created through the link";
}

// RLIMIT_FSIZE makes the write fail (EFBIG) as a full disk would (ENOSPC);
// SIGXFSZ is ignored by the shell, and an ignored signal stays ignored across exec.
TEST(OutputsCli, ExportThatCannotBeWrittenKeepsTheOldFileAndNamesTheReason) {
  ScratchDir dir;
  spit(dir.path() / "out.json", "old");
  auto r = run_strata("--version >/dev/null; trap '' XFSZ; ulimit -f 8; '" STRATA_BIN "' export '" +
                          kCpuTrace + "' --format speedscope --force -o out.json",
                      dir.path());
  EXPECT_EQ(r.status, 1) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0], "strata: cannot write 'out.json': File too large");
  EXPECT_EQ(read_file(dir.path() / "out.json"), "old");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"out.json"}) << "no temporary left";
}

TEST(OutputsCli, ExportOutputProblemsAreUsageErrorsWithTheReason) {
  ScratchDir dir;
  fs::create_directory(dir.path() / "d");
  struct Case {
    std::string output;
    std::string line;
  };
  for (const Case& c : std::vector<Case>{
           {"''", "strata: -o '': empty output file name (use -o - for standard output)"},
           {"d", "strata: cannot write 'd': it is a directory"},
           {"d/", "strata: cannot write 'd/': it is a directory"},
           {"no/such/out.svg",
            "strata: cannot create 'no/such/out.svg': No such file or directory"},
       }) {
    auto r =
        run_strata("export '" + kCpuTrace + "' --format svg --force -o " + c.output, dir.path());
    EXPECT_EQ(r.status, 2) << c.output;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_EQ(r.err_lines()[0], c.line);
  }
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"d"});
  EXPECT_TRUE(fs::is_empty(dir.path() / "d"));
}

// Each recording verb checks its output before it runs the target (which
// would create the file "ran").
TEST(OutputsCli, RecordingVerbsRefuseABadOutputBeforeRunning) {
  ScratchDir dir;
  fs::create_directory(dir.path() / "d");
  spit(dir.path() / "taken.sqlite", "precious");
  std::vector<std::string> verbs = {"bench", "cpu"};
  if (build::kHaveCuda) {
    verbs.push_back("trace");
    verbs.push_back("kernels");
  }
  struct Case {
    std::string flags;
    std::string line;
  };
  const std::vector<Case> cases = {
      {"-o d --force", "strata: cannot write 'd': it is a directory"},
      {"-o no/such/t.sqlite",
       "strata: cannot create 'no/such/t.sqlite': No such file or directory"},
      {"-o taken.sqlite", "strata: taken.sqlite exists; use --force to overwrite"},
      {"-o ''", "strata: -o '': empty output file name"},
  };
  for (const auto& verb : verbs) {
    for (const Case& c : cases) {
      auto r = run_strata(verb + " " + c.flags + " -- sh -c 'touch ran'", dir.path());
      EXPECT_EQ(r.status, 2) << verb << " " << c.flags << ": " << r.err;
      ASSERT_FALSE(r.err_lines().empty()) << verb << " " << c.flags;
      EXPECT_EQ(r.err_lines().back(), c.line) << verb;
      EXPECT_FALSE(fs::exists(dir.path() / "ran")) << verb << " " << c.flags << " ran the target";
    }
  }
  EXPECT_EQ(read_file(dir.path() / "taken.sqlite"), "precious");
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"d", "taken.sqlite"}));
}

TEST(OutputsCli, RecordingVerbsRefuseAnUnwritableDirectoryBeforeRunning) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  ScratchDir dir;
  fs::create_directory(dir.path() / "ro");
  fs::permissions(dir.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  auto r = run_strata("bench -o ro/t.sqlite -- sh -c 'touch ran'", dir.path());
  fs::permissions(dir.path() / "ro", fs::perms::owner_all);
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0], "strata: cannot create 'ro/t.sqlite': Permission denied");
  EXPECT_FALSE(fs::exists(dir.path() / "ran"));
}

TEST(OutputsCli, BenchVsEmptyIsAUsageError) {
  ScratchDir dir;
  for (const std::string vs : {"''", "'  '", "\"''\""}) {
    auto r = run_strata("bench --vs " + vs + " -- sh -c 'touch ran'", dir.path());
    EXPECT_EQ(r.status, 2) << vs;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_EQ(r.err_lines()[0].rfind("strata: --vs", 0), 0u) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "ran"));
}

// As for the main command (bench_cli_test): one line, 127, and nothing ran.
TEST(OutputsCli, BenchVsCommandThatCannotStartIsRefusedBeforeAnythingRuns) {
  ScratchDir dir;
  spit(dir.path() / "not-executable", "#!/bin/sh\n");
  struct Case {
    std::string vs;
    std::string line;
  };
  for (const Case& c : std::vector<Case>{
           {"no-such-command-strata",
            "strata: cannot start 'no-such-command-strata': No such "
            "file or directory"},
           {"./not-executable", "strata: cannot start './not-executable': Permission denied"},
           {".", "strata: cannot start '.': Permission denied"},
       }) {
    auto r =
        run_strata("bench -o t.sqlite --vs '" + c.vs + " --flag' -- sh -c 'touch ran'", dir.path());
    EXPECT_EQ(r.status, 127) << c.vs;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_EQ(r.err_lines()[0], c.line);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "ran"));
  EXPECT_FALSE(fs::exists(dir.path() / "t.sqlite"));
}

// Four runs without -o at once: each keeps its run, in its own file, and says
// which (item 8). The runs overlap: each sleeps while the others start.
TEST(OutputsCli, ParallelRunsWithoutOutputGetDistinctFiles) {
  ScratchDir dir;
  constexpr int kRuns = 4;
  std::string script;
  for (int i = 0; i < kRuns; ++i) {
    script += "'" STRATA_BIN "' bench -n 1 --warmup 0 -q -- sh -c 'sleep 0.3' >/dev/null 2>err" +
              std::to_string(i) + " & ";
  }
  script += "wait";
  auto r = run_strata("--version >/dev/null; " + script, dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::set<std::string> named;
  for (int i = 0; i < kRuns; ++i) {
    std::string err = read_file(dir.path() / ("err" + std::to_string(i)));
    const std::string prefix = "strata: results written to ";
    ASSERT_EQ(err.rfind(prefix, 0), 0u) << err;
    named.insert(err.substr(prefix.size(), err.find('\n') - prefix.size()));
  }
  std::set<std::string> expected;
  for (int i = 1; i <= kRuns; ++i) expected.insert("strata-bench" + std::to_string(i) + ".sqlite");
  EXPECT_EQ(named, expected);
  for (const auto& name : expected) {
    auto reader = store::TraceReader::open((dir.path() / name).string());
    ASSERT_TRUE(reader.ok()) << name;
    auto runs = reader->bench_runs();
    ASSERT_TRUE(runs.ok());
    EXPECT_EQ(runs->size(), 1u) << name;
  }
}

// A strata killed by SIGKILL leaves its temporary trace; the next run in the
// directory clears it (only it: a live process's and a foreign name stay).
TEST(OutputsCli, ATraceRunClearsTemporariesOfKilledRuns) {
  ScratchDir dir;
  auto r =
      run_strata("bench -n 1 --warmup 0 -q -o t.sqlite -- sh -c 'kill -KILL $PPID'", dir.path());
  EXPECT_EQ(r.status, 128 + 9) << r.err;
  std::vector<std::string> left = entries(dir.path());
  ASSERT_EQ(left.size(), 1u) << "the killed run's temporary file";
  long pid = 0;
  uint32_t host = 0;
  ASSERT_TRUE(parse_temp_name(left[0], &pid, &host)) << left[0];
  EXPECT_EQ(left[0].rfind(".t.sqlite.strata-", 0), 0u) << left[0];

  char live_suffix[32];  // this test's own pid: alive, so its file stays
  std::snprintf(live_suffix, sizeof live_suffix, "%d-%08x-00000000", static_cast<int>(::getpid()),
                host_hash());
  std::string live = std::string(".x.sqlite.strata-") + live_suffix;
  spit(dir.path() / live, "");
  spit(dir.path() / ".x.sqlite.strata-1-2", "");
  r = run_strata("bench -n 1 --warmup 0 -q -- true", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> expected = {live, ".x.sqlite.strata-1-2", "strata-bench1.sqlite"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(entries(dir.path()), expected);
}

}  // namespace
}  // namespace strata::testing
