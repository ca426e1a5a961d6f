// How strata claims its output name: parallel runs with default names get
// distinct files; a symlink at the final name is replaced, never followed;
// the temporaries of dead strata runs are removed by the next run in the
// directory, and a live run's are left alone.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "faults/fault_harness.h"
#include "faults/output_fixtures.h"
#include "store/trace_db.h"
#include "util/temp_dir.h"

namespace strata::faults {
namespace {

std::vector<std::string> files_named(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(prefix)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(OutputNameFaults, ParallelRunsGetDistinctDefaultNames) {
  test_util::TempDir dir("strata-faults");
  constexpr int kRuns = 4;
  std::vector<Strata> runs;
  // The runs overlap (each target sleeps), so all pick a name before any commits.
  for (int i = 0; i < kRuns; ++i) {
    runs.push_back(Strata::start(
        {{"bench", "-n", "1", "--warmup", "0", "-q", "--", "sleep", "0.3"}, dir.path()}));
  }
  for (auto& r : runs) {
    Finished f = r.wait();
    EXPECT_TRUE(f.exited && f.code == 0) << f.describe() << "\n" << f.err;
  }
  auto traces = files_named(dir.path(), "strata-bench");
  EXPECT_EQ(traces.size(), size_t{kRuns}) << "parallel runs shared or lost a default name";
  for (const auto& name : traces) {
    EXPECT_TRUE(store::TraceReader::open((dir.path() / name).string())) << name;
  }
  EXPECT_EQ(strata_temps(dir.path()), std::vector<std::string>{});
}

class SymlinkAtName : public ::testing::TestWithParam<std::string> {};

TEST_P(SymlinkAtName, IsReplacedNotFollowed) {
  if (GetParam() == "trace" && !have_trace_verb()) GTEST_SKIP() << "built without CUDA";
  OutputVerb verb;
  for (auto& v : output_verbs()) {
    if (v.name == GetParam()) verb = v;
  }
  test_util::TempDir dir("strata-faults");
  const std::string victim_bytes = "a file the symlink points at, which strata must not write\n";
  write_file(dir.path() / "victim", victim_bytes);
  const std::string name = verb.name == "export" ? "out.json" : "out.sqlite";
  fs::create_symlink("victim", dir.path() / name);
  Finished f = run({args_writing(verb, name), dir.path()});
  EXPECT_TRUE(f.exited && f.code == 0) << f.describe() << "\n" << f.err;
  EXPECT_EQ(read_file(dir.path() / "victim"), victim_bytes) << "strata wrote through the symlink";
  EXPECT_FALSE(fs::is_symlink(dir.path() / name)) << "the symlink is still at the name";
  EXPECT_EQ(strata_temps(dir.path()), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(Faults, SymlinkAtName,
                         ::testing::Values("cpu", "bench", "trace", "export"),
                         [](const auto& info) { return info.param; });

// A pid no process has now: a child that has exited and been reaped.
pid_t dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

// For a failure message: whether `pid` (our child, not yet waited for) is
// running, that is, has a /proc entry and is not a zombie.
bool live_is_running(pid_t pid) {
  std::string stat = read_file(fs::path("/proc") / std::to_string(pid) / "stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

std::string listing(const fs::path& dir) {
  std::string names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    names += (names.empty() ? "" : " ") + entry.path().filename().string();
  }
  return names;
}

TEST(OutputNameFaults, DeadRunsTempsAreRemovedLiveRunsKept) {
  test_util::TempDir dir("strata-faults");
  const std::string user_file = "notes.strata-1-0badf00d";  // not a dot file: not strata's
  write_file(dir.path() / user_file, "the user's");

  // A live run, with its temporary in the directory while its target waits
  // for a file this test makes last. (A fixed sleep raced: under ASan on a
  // loaded CI machine the run ended, and renamed its temporary, before the
  // second run had looked.)
  struct ReleaseOnExit {  // so an early ASSERT return leaves no run waiting
    fs::path go;
    ~ReleaseOnExit() { std::ofstream{go}; }
  } release{dir.path() / "go"};
  // The target first leaves "waiting", so the live run is known to be inside
  // its measured run (temporary made, not yet renamed) when the test looks.
  Strata live =
      Strata::start({{"bench", "-n", "1", "--warmup", "0", "-q", "-o", "live.sqlite", "--", "sh",
                      "-c", ": > waiting; while [ ! -e go ]; do sleep 0.02; done"},
                     dir.path()});
  auto deadline = std::chrono::steady_clock::now() + milliseconds(10'000);
  std::string live_temp;
  while ((live_temp.empty() || !fs::exists(dir.path() / "waiting")) &&
         std::chrono::steady_clock::now() < deadline) {
    for (auto& t : strata_temps(dir.path())) {
      if (t.starts_with(".live.sqlite.")) live_temp = t;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_FALSE(live_temp.empty()) << "the live run made no temporary";
  ASSERT_TRUE(fs::exists(dir.path() / "waiting")) << "the live run's target never started";
  // What a SIGKILLed strata on this host would have left: the live run's
  // name (.NAME.strata-PID-HOST-RANDOM) with a pid that is gone.
  const size_t pid_at = live_temp.find(".strata-") + std::string(".strata-").size();
  const std::string after_pid = live_temp.substr(live_temp.find('-', pid_at));
  const std::string stale = ".old.sqlite.strata-" + std::to_string(dead_pid()) + after_pid;
  write_file(dir.path() / stale, "what a SIGKILLed strata left");

  Finished next = run(
      {{"bench", "-n", "1", "--warmup", "0", "-q", "-o", "next.sqlite", "--", "true"}, dir.path()});
  EXPECT_TRUE(next.exited && next.code == 0) << next.describe() << next.err;
  auto temps = strata_temps(dir.path());
  EXPECT_EQ(std::count(temps.begin(), temps.end(), stale), 0) << "a dead run's temporary was kept";
  EXPECT_EQ(std::count(temps.begin(), temps.end(), live_temp), 1)
      << "a live run's temporary was removed; the live run is "
      << (live_is_running(live.pid()) ? "still running" : "gone") << "; the directory holds "
      << listing(dir.path());
  EXPECT_TRUE(fs::exists(dir.path() / user_file)) << "a file strata did not make was removed";

  write_file(release.go, "");
  Finished f = live.wait();
  EXPECT_TRUE(f.exited && f.code == 0) << f.describe() << f.err;
  EXPECT_TRUE(store::TraceReader::open((dir.path() / "live.sqlite").string()));
}

}  // namespace
}  // namespace strata::faults
