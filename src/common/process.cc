#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/clock.h"
#include "common/signal_forwarder.h"

namespace strata {
namespace {

int64_t timeval_ns(const timeval& tv) {
  return int64_t{tv.tv_sec} * 1'000'000'000 + int64_t{tv.tv_usec} * 1'000;
}

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // our stdout is gone (closed pipe): the child's output is dropped, not fatal
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Splits the child's stdout into lines for the metric parser.
class LineSplitter {
 public:
  static constexpr size_t kMaxLine = 1 << 20;
  explicit LineSplitter(const std::function<void(std::string_view)>& sink) : sink_(sink) {}
  void feed(const char* data, size_t size) {
    if (!sink_) return;
    for (size_t i = 0; i < size; ++i) {
      if (data[i] == '\n' || pending_.size() >= kMaxLine) {
        sink_(pending_);
        pending_.clear();
        if (data[i] == '\n') continue;
      }
      pending_.push_back(data[i]);
    }
  }
  void finish() {
    if (sink_ && !pending_.empty()) sink_(pending_);
    pending_.clear();
  }

 private:
  const std::function<void(std::string_view)>& sink_;
  std::string pending_;
};

}  // namespace

void tie_child_to_parent(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) raise(SIGKILL);  // strata died between fork and prctl
  SignalForwarder::restore_in_child();
}

[[noreturn]] void exec_or_report(const std::vector<std::string>& argv, int error_fd) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  int err = errno;
  (void)!::write(error_fd, &err, sizeof err);
  _exit(127);
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options) {
  if (argv.empty()) return make_error("empty command");
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    return make_error(std::string("pipe: ") + std::strerror(errno));
  }
  int out_pipe[2] = {-1, -1};
  if (options.output == OutputMode::kCapture && pipe2(out_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    return make_error(std::string("pipe: ") + std::strerror(err));
  }

  int64_t start = monotonic_ns();
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    if (out_pipe[0] >= 0) {
      close(out_pipe[0]);
      close(out_pipe[1]);
    }
    return make_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    tie_child_to_parent(parent);
    close(error_pipe[0]);
    bool capture = options.output == OutputMode::kCapture;
    bool discard = options.output == OutputMode::kDiscard;
    if (capture) dup2(out_pipe[1], STDOUT_FILENO);  // dup2 clears close-on-exec on the copy
    if (discard || (capture && options.discard_stderr)) {
      int null_fd = open("/dev/null", O_WRONLY);
      if (null_fd >= 0) {
        if (discard) dup2(null_fd, STDOUT_FILENO);
        dup2(null_fd, STDERR_FILENO);
      }
    }
    exec_or_report(argv, error_pipe[1]);
  }

  close(error_pipe[1]);
  if (out_pipe[1] >= 0) close(out_pipe[1]);
  SignalForwarder::track_child(pid);  // whoever calls: a verb's forwarder reaches this child
  if (options.on_child) options.on_child(pid);

  if (options.output == OutputMode::kCapture) {
    LineSplitter lines(options.on_stdout_line);
    char buf[65536];
    for (;;) {
      ssize_t n = read(out_pipe[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (options.echo_captured) write_all(STDOUT_FILENO, buf, static_cast<size_t>(n));
      lines.feed(buf, static_cast<size_t>(n));
    }
    lines.finish();
    close(out_pipe[0]);
  }

  int status = 0;
  rusage usage{};
  pid_t reaped;
  do {
    reaped = wait4(pid, &status, 0, &usage);
  } while (reaped < 0 && errno == EINTR);
  int64_t end = monotonic_ns();
  SignalForwarder::track_child(0);
  if (options.on_child) options.on_child(-1);

  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(error_pipe[0], &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    return make_error("cannot start '" + argv[0] + "': " + std::strerror(exec_errno));
  }
  if (reaped < 0) return make_error(std::string("wait4: ") + std::strerror(errno));

  ProcessResult result;
  result.wall_ns = end - start;
  result.user_ns = timeval_ns(usage.ru_utime);
  result.sys_ns = timeval_ns(usage.ru_stime);
  result.max_rss_kb = usage.ru_maxrss;
  result.minor_faults = usage.ru_minflt;
  result.major_faults = usage.ru_majflt;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "";
}

std::string describe_termination(const ProcessResult& result) {
  if (result.signal) {
    const char* abbrev = sigabbrev_np(*result.signal);
    return "killed by signal " + std::to_string(*result.signal) +
           (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
  }
  return "exited with status " + std::to_string(result.exit_status.value_or(0));
}

std::optional<std::string> read_proc_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::optional<uint32_t> process_fs_uid(int pid) {
  const std::optional<std::string> status =
      read_proc_text("/proc/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  std::istringstream in(*status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    uint32_t real = 0, effective = 0, saved = 0, fs = 0;
    if (fields >> real >> effective >> saved >> fs) return fs;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace strata
