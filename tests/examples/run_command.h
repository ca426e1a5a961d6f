// Runs an example program as a child process and collects what it printed, so
// that tests check the programs exactly as users and strata run them.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace examples_test {

struct CommandResult {
  int exit_code = -1;  // the exit status, or 128 + signal when killed
  std::string out;
  std::string err;
};

namespace detail {

// A file the child writes and the parent reads back afterwards: simpler than two
// pipes, which would need polling to avoid a deadlock on large output.
class CaptureFile {
 public:
  CaptureFile() : path_((std::filesystem::temp_directory_path() / "strata-example-XXXXXX")) {
    fd_ = mkstemp(path_.data());
    if (fd_ < 0) throw std::runtime_error("mkstemp failed for " + path_);
  }
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;
  ~CaptureFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  std::string contents() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace detail

// argv[0] is the program's path; no shell is involved, so nothing needs quoting.
inline CommandResult run_command(const std::vector<std::string>& argv) {
  detail::CaptureFile out;
  detail::CaptureFile err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd(), STDERR_FILENO);

  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawn failed for " + argv[0]);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed for " + argv[0]);
  }
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = out.contents();
  result.err = err.contents();
  return result;
}

}  // namespace examples_test
