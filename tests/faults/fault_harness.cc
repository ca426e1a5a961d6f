#include "faults/fault_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/temp_dir.h"

namespace strata::faults {

namespace {

// Where strata's stderr goes: never the directory under test, which may be a
// full file system or carry a size limit.
const fs::path& stderr_dir() {
  static test_util::TempDir dir("strata-faults-stderr");
  return dir.path();
}

[[noreturn]] void child(const Launch& launch, const fs::path& stderr_path) {
  if (chdir(launch.cwd.c_str()) != 0) _exit(120);
  int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (err < 0 || dup2(err, STDERR_FILENO) < 0) _exit(121);
  int in = open("/dev/null", O_RDONLY);
  if (in >= 0) dup2(in, STDIN_FILENO);
  switch (launch.out) {
    case Stdout::kClosed:
      close(STDOUT_FILENO);
      break;
    case Stdout::kDevNull:
    case Stdout::kDevFull: {
      int fd = open(launch.out == Stdout::kDevFull ? "/dev/full" : "/dev/null", O_WRONLY);
      if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(122);
      break;
    }
    case Stdout::kFile: {
      int fd = open(launch.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(122);
      break;
    }
  }
  for (const auto& [name, value] : launch.env) setenv(name.c_str(), value.c_str(), 1);
  if (launch.file_size) {
    // An ignored SIGXFSZ stays ignored across exec: writes past the limit
    // then fail with EFBIG, which is what a full quota looks like to strata.
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{*launch.file_size, *launch.file_size};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(123);
  }
  // The test's own signal mask and dispositions must not leak into strata.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  std::vector<char*> argv;
  std::string bin = strata_bin();
  argv.push_back(bin.data());
  std::vector<std::string> args = launch.args;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(bin.c_str(), argv.data());
  _exit(124);
}

}  // namespace

std::string Finished::describe() const {
  if (exited) return "exit " + std::to_string(code);
  const char* abbrev = sigabbrev_np(signal);
  return "killed by signal " + std::to_string(signal) + " (SIG" + (abbrev ? abbrev : "?") + ")";
}

Strata Strata::start(const Launch& launch) {
  static int counter = 0;
  Strata s;
  s.stderr_path_ = stderr_dir() / ("stderr-" + std::to_string(++counter));
  std::fflush(nullptr);
  s.pid_ = fork();
  if (s.pid_ == 0) child(launch, s.stderr_path_);
  return s;
}

bool Strata::signal(int sig) const {
  if (pid_ <= 0) return false;
  // Not reaped yet, so kill() would "succeed" on a zombie: look first.
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
      info.si_pid == pid_) {
    return false;
  }
  return kill(pid_, sig) == 0;
}

Finished Strata::wait(milliseconds limit) {
  Finished f;
  auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  bool timed_out = false;
  for (;;) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0 && errno != EINTR) {
      f.err = "waitpid: " + std::string(std::strerror(errno));
      return f;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  f.exited = WIFEXITED(status);
  f.code = f.exited ? WEXITSTATUS(status) : -1;
  f.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  f.err = read_file(stderr_path_);
  fs::remove(stderr_path_);
  if (timed_out) f.err += "(the test killed strata: it ran past " + std::to_string(limit.count()) + " ms)\n";
  return f;
}

Finished run(const Launch& launch, milliseconds limit) {
  return Strata::start(launch).wait(limit);
}

std::string strata_bin() { return STRATA_BIN; }
std::string spin_target_bin() { return FAULTS_SPIN_TARGET; }
std::string test_data(const std::string& relative) {
  return std::string(STRATA_TEST_DATA) + "/" + relative;
}

std::vector<std::string> strata_temps(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(".") && name.find(".strata-") != std::string::npos) found.push_back(name);
  }
  return found;
}

std::optional<pid_t> wait_for_pid_file(const fs::path& path, milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = read_file(path);
    // The shell writes "PID\n" in one write; wait for the newline.
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::atol(text.c_str()));
    std::this_thread::sleep_for(milliseconds(1));
  }
  return std::nullopt;
}

std::vector<pid_t> read_pids(const fs::path& path) {
  std::vector<pid_t> pids;
  std::istringstream in(read_file(path));
  for (long pid; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

namespace {

// 'Z' for a zombie, 0 when the process does not exist.
char process_state(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return 0;
  return stat[close + 2];
}

}  // namespace

bool gone_within(pid_t pid, milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    // Ours (re-parented to this subreaper): reap it; else look at /proc.
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    char state = process_state(pid);
    if (state == 0 || state == 'Z' || state == 'X') return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
}

std::vector<pid_t> survivors(const std::vector<pid_t>& pids, milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<pid_t> alive;
  for (pid_t pid : pids) {
    if (pid <= 0) continue;
    auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (gone_within(pid, std::max(left, milliseconds(0)))) continue;
    alive.push_back(pid);
    kill(pid, SIGKILL);
    gone_within(pid, milliseconds(2000));
  }
  return alive;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> out;
  for (auto& line : lines(err)) {
    if (line.starts_with("strata: note:") || line.starts_with("strata: warning:")) continue;
    out.push_back(line);
  }
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

uint64_t seed() {
  static const uint64_t value = [] {
    const char* env = std::getenv("STRATA_FAULTS_SEED");
    uint64_t s = env && *env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("faults: seed %llu (STRATA_FAULTS_SEED=%llu reproduces this run)\n",
                static_cast<unsigned long long>(s), static_cast<unsigned long long>(s));
    return s;
  }();
  return value;
}

std::mt19937_64& rng() {
  static std::mt19937_64 engine(seed());
  return engine;
}

int64_t uniform_ms(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng());
}

void become_subreaper() {
  static const bool done = [] {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return true;
  }();
  (void)done;
}

}  // namespace strata::faults
