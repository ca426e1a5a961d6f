// Signals sent to a running strata (issue 21 item 5) and perf maps that are
// not the target's (item 6), end to end on the strata executable.
//
// Each signal test starts `strata cpu|bench -- spin_helper` itself (fork and
// exec, so that the pid it signals is strata's), waits until the target runs,
// signals strata and checks what docs/cli.md ("Signals") promises: the trace
// is committed and opens, it holds what was measured, the exit status is
// 128+N, and no hidden temporary file is left beside it.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"
#include "common/process.h"
#include "store/trace_db.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kSpin = STRATA_SPIN_HELPER;

// strata running in `dir` with its stdout/stderr in files there.
struct Launched {
  pid_t pid = -1;
  fs::path dir;
};

Launched launch_strata(const fs::path& dir, const std::vector<std::string>& args) {
  Launched l{-1, dir};
  l.pid = fork();
  if (l.pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    const int out = open(".stdout", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(".stderr", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = open("/dev/null", O_RDONLY);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    dup2(in, STDIN_FILENO);
    // A shell's background job starts with SIGINT and SIGQUIT ignored, and
    // strata keeps an inherited SIG_IGN (nohup): give strata the defaults.
    for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGUSR1, SIGPIPE}) signal(sig, SIG_DFL);
    rlimit no_core{0, 0};  // the SIGQUIT runs must not leave core files
    setrlimit(RLIMIT_CORE, &no_core);
    std::vector<char*> argv{const_cast<char*>(STRATA_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(STRATA_BIN, argv.data());
    _exit(127);
  }
  return l;
}

// The shell-style status once strata exits; nullopt after `limit`.
std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(10ms);
  }
  return std::nullopt;
}

// Fields of /proc/PID/stat after the command name: state, ppid, ...
// read_proc_text, not an ifstream: the process may exit between the open and
// the read (CI saw it), which a filebuf throws as an exception.
bool proc_stat(pid_t pid, char* state, pid_t* ppid, std::string* comm) {
  const std::optional<std::string> stat = read_proc_text("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  const std::string& text = *stat;
  const size_t open_paren = text.find('(');
  const size_t close_paren = text.rfind(')');
  if (open_paren == std::string::npos || close_paren == std::string::npos) return false;
  *comm = text.substr(open_paren + 1, close_paren - open_paren - 1);
  std::istringstream rest(text.substr(close_paren + 1));
  return static_cast<bool>(rest >> *state >> *ppid);
}

// The pid of a running child of `parent` named `comm` (polls /proc); -1 after `limit`.
pid_t wait_child(pid_t parent, const std::string& comm, std::chrono::milliseconds limit,
                 pid_t not_this = -1) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    DIR* proc = opendir("/proc");
    while (const dirent* e = proc ? readdir(proc) : nullptr) {
      const pid_t pid = std::atoi(e->d_name);
      char state = 0;
      pid_t ppid = 0;
      std::string name;
      if (pid <= 0 || pid == not_this || !proc_stat(pid, &state, &ppid, &name)) continue;
      if (ppid == parent && name == comm && state != 'Z') {
        closedir(proc);
        return pid;
      }
    }
    if (proc) closedir(proc);
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

// Gone, or a zombie nobody reaped yet (it runs no more either way).
bool is_dead(pid_t pid) {
  char state = 0;
  pid_t ppid = 0;
  std::string name;
  return !proc_stat(pid, &state, &ppid, &name) || state == 'Z' || state == 'X';
}

// Hidden temporaries of the trace (".t.sqlite.strata-PID-*").
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".t.sqlite", 0) == 0) found.push_back(name);
  }
  return found;
}

int64_t table_rows(const store::TraceReader& reader, const std::string& table) {
  auto tables = reader.tables();
  if (!tables) return -1;
  for (const auto& t : *tables) {
    if (t.name == table) return t.rows;
  }
  return -1;
}

bool perf_usable(const ScratchDir& dir) {
  auto r = run_strata("cpu -o probe.sqlite -- true", dir.path());
  fs::remove(dir.path() / "probe.sqlite");
  return r.status == 0;
}

std::string stderr_of(const Launched& l) {
  return read_file(l.dir / ".stderr");
}

class SignalToStrata : public ::testing::TestWithParam<int> {};

TEST_P(SignalToStrata, CpuCommitsTheProfileSampledSoFar) {
  const int sig = GetParam();
  ScratchDir dir;
  if (!perf_usable(dir)) GTEST_SKIP() << "perf_event_open refused here";
  Launched l = launch_strata(dir.path(), {"cpu", "-o", "t.sqlite", "--", kSpin, "--forever"});
  const pid_t target = wait_child(l.pid, "spin_helper", 10s);
  ASSERT_GT(target, 0) << "the target never started: " << stderr_of(l);
  std::this_thread::sleep_for(400ms);  // ~400 samples at 1 kHz
  kill(l.pid, sig);
  const auto status = wait_exit(l.pid, 60s);
  ASSERT_TRUE(status.has_value()) << "strata did not exit after " << sigabbrev_np(sig);
  EXPECT_EQ(*status, 128 + sig) << stderr_of(l);
  EXPECT_TRUE(is_dead(target));
  EXPECT_TRUE(temporaries(dir.path()).empty()) << temporaries(dir.path())[0];
  auto reader = store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader.ok()) << reader.error().message << "\n" << stderr_of(l);
  auto run = reader->run();
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->signal, sig);
  EXPECT_GE(table_rows(*reader, "strata_cpu_samples"), 100) << stderr_of(l);
}

TEST_P(SignalToStrata, BenchCommitsTheRunsMeasuredSoFar) {
  const int sig = GetParam();
  ScratchDir dir;
  // Three runs of 300 ms of CPU each; the signal comes during the second.
  Launched l = launch_strata(dir.path(), {"bench", "-n", "3", "--warmup", "0", "-o", "t.sqlite",
                                          "--", kSpin, "--ms", "300"});
  const pid_t first = wait_child(l.pid, "spin_helper", 10s);
  ASSERT_GT(first, 0) << stderr_of(l);
  const pid_t second = wait_child(l.pid, "spin_helper", 20s, first);
  ASSERT_GT(second, 0) << stderr_of(l);
  std::this_thread::sleep_for(50ms);
  kill(l.pid, sig);
  const auto status = wait_exit(l.pid, 30s);
  ASSERT_TRUE(status.has_value()) << "strata did not exit after " << sigabbrev_np(sig);
  EXPECT_EQ(*status, 128 + sig) << stderr_of(l);
  EXPECT_TRUE(temporaries(dir.path()).empty()) << temporaries(dir.path())[0];
  auto reader = store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader.ok()) << reader.error().message << "\n" << stderr_of(l);
  auto runs = reader->bench_runs();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 2u) << "the first run, and the second that the signal ended";
  EXPECT_EQ((*runs)[0].exit_status, 0);
  EXPECT_EQ((*runs)[1].signal, sig);
}

INSTANTIATE_TEST_SUITE_P(StopSignals, SignalToStrata,
                         ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGQUIT),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string("SIG") + sigabbrev_np(info.param);
                         });

TEST(SignalsCli, Sigusr1IsTheProgramsAndStrataKeepsItsProfile) {
  ScratchDir dir;
  if (!perf_usable(dir)) GTEST_SKIP() << "perf_event_open refused here";
  Launched l = launch_strata(dir.path(), {"cpu", "-o", "t.sqlite", "--", kSpin, "--forever"});
  ASSERT_GT(wait_child(l.pid, "spin_helper", 10s), 0) << stderr_of(l);
  std::this_thread::sleep_for(200ms);
  kill(l.pid, SIGUSR1);
  const auto status = wait_exit(l.pid, 60s);
  ASSERT_TRUE(status.has_value());
  // The target died of it (its default action): strata exits with its status.
  EXPECT_EQ(*status, 128 + SIGUSR1) << stderr_of(l);
  EXPECT_TRUE(temporaries(dir.path()).empty());
  auto reader = store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->run()->signal, SIGUSR1);
}

TEST(SignalsCli, SigpipeFromOutsideIsDroppedAndTheRunCompletes) {
  ScratchDir dir;
  Launched l = launch_strata(dir.path(), {"bench", "-n", "1", "--warmup", "0", "-o", "t.sqlite",
                                          "--", kSpin, "--ms", "300"});
  ASSERT_GT(wait_child(l.pid, "spin_helper", 10s), 0) << stderr_of(l);
  kill(l.pid, SIGPIPE);
  const auto status = wait_exit(l.pid, 30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << stderr_of(l);
  auto reader = store::TraceReader::open((dir.path() / "t.sqlite").string());
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto runs = reader->bench_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].exit_status, 0);
}

// kill -9 cannot be caught: the target must die with strata all the same.
void expect_target_dies_with_strata(const std::vector<std::string>& args) {
  ScratchDir dir;
  Launched l = launch_strata(dir.path(), args);
  const pid_t target = wait_child(l.pid, "spin_helper", 10s);
  ASSERT_GT(target, 0) << stderr_of(l);
  kill(l.pid, SIGKILL);
  ASSERT_EQ(wait_exit(l.pid, 10s), 128 + SIGKILL);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!is_dead(target) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  const bool dead = is_dead(target);
  if (!dead) kill(target, SIGKILL);  // do not leave it spinning for 20 s
  EXPECT_TRUE(dead) << "the target outlived strata";
}

TEST(SignalsCli, SigkillToStrataCpuTakesTheTargetDown) {
  ScratchDir probe;
  if (!perf_usable(probe)) GTEST_SKIP() << "perf_event_open refused here";
  expect_target_dies_with_strata({"cpu", "-o", "t.sqlite", "--", kSpin, "--forever"});
}

TEST(SignalsCli, SigkillToStrataBenchTakesTheTargetDown) {
  expect_target_dies_with_strata(
      {"bench", "-n", "1", "--warmup", "0", "-o", "t.sqlite", "--", kSpin, "--forever"});
}

// Item 6: /tmp is everyone's. A perf map under the target's pid that another
// uid owns (chown 65534, as a planted file would be) or that is a symlink is
// neither read nor removed; the target's own map is removed after reading.
class PerfMapOwner : public ::testing::Test {
 protected:
  // Runs `strata cpu` on a shell that makes /tmp/perf-$$.map with `make`
  // (shell text; $M is the path), then execs spin_helper under the same pid.
  // Returns the map's path.
  std::string run_with_map(const std::string& make) {
    std::ofstream(dir_.path() / "planted.txt") << "1000 10 py::planted:x.py\n";
    std::ofstream(dir_.path() / "target.sh")
        << "M=/tmp/perf-$$.map\necho $$ > pid\n" << make << "\nexec " << kSpin << " --ms 200\n";
    result_ = run_strata("cpu -o t.sqlite -- sh target.sh", dir_.path());
    std::string pid = read_file(dir_.path() / "pid");
    while (!pid.empty() && pid.back() == '\n') pid.pop_back();
    return "/tmp/perf-" + pid + ".map";
  }
  void TearDown() override {
    if (!path_.empty()) unlink(path_.c_str());
  }

  ScratchDir dir_;
  CliResult result_;
  std::string path_;
};

TEST_F(PerfMapOwner, AnotherUsersMapIsNeitherReadNorRemoved) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file to uid 65534";
  if (!perf_usable(dir_)) GTEST_SKIP() << "perf_event_open refused here";
  path_ = run_with_map("cp planted.txt $M; chown 65534 $M");
  ASSERT_EQ(result_.status, 0) << result_.err;
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0) << "the planted map was deleted";
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(read_file(path_), "1000 10 py::planted:x.py\n");
  EXPECT_NE(result_.err.find("strata: perf map '" + path_ +
                             "': owned by uid 65534, not the target's (uid 0); not read, not "
                             "removed"),
            std::string::npos)
      << result_.err;
}

TEST_F(PerfMapOwner, ASymlinkIsNotFollowedNorRemoved) {
  if (!perf_usable(dir_)) GTEST_SKIP() << "perf_event_open refused here";
  path_ = run_with_map("ln -s \"$PWD/planted.txt\" $M");
  ASSERT_EQ(result_.status, 0) << result_.err;
  struct stat st {};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0) << "the symlink was deleted";
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(result_.err.find("strata: perf map '" + path_ +
                             "': not a regular file; not read, not removed"),
            std::string::npos)
      << result_.err;
}

TEST_F(PerfMapOwner, TheTargetsOwnMapIsReadAndRemoved) {
  if (!perf_usable(dir_)) GTEST_SKIP() << "perf_event_open refused here";
  path_ = run_with_map("cp planted.txt $M");
  ASSERT_EQ(result_.status, 0) << result_.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(path_))) << "the target's own map is strata's to remove";
  EXPECT_EQ(result_.err.find("perf map"), std::string::npos) << result_.err;
}

}  // namespace
}  // namespace strata::testing
