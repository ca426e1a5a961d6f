// Runs a child process to completion and measures it, the launcher under
// `strata bench` (and later `cpu`/`trace`, which add their own set-up).
//
// Threading: run_process blocks the calling thread until the child exits.
// It forks, so call it from a single-threaded process or accept that only
// the calling thread exists in the child until exec.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace strata {

enum class OutputMode {
  kInherit,  // the child writes straight to strata's stdout/stderr
  kCapture,  // stdout is read through a pipe (and echoed unless discarded)
  kDiscard,  // stdout and stderr go to /dev/null
};

struct ProcessOptions {
  OutputMode output = OutputMode::kInherit;
  bool echo_captured = true;    // with kCapture: copy the child's stdout to ours
  bool discard_stderr = false;  // with kCapture: send the child's stderr to /dev/null
  // With kCapture: called with each complete line of the child's stdout
  // (without the newline). Lines longer than 1 MiB are split.
  std::function<void(std::string_view line)> on_stdout_line;
  // Called in the parent right after fork with the child's pid (to forward
  // signals to it), and with -1 once it has been reaped.
  std::function<void(int pid)> on_child;
};

struct ProcessResult {
  int64_t wall_ns = 0;  // fork to reaped, CLOCK_MONOTONIC
  int64_t user_ns = 0;  // from wait4's rusage: the child and its waited-for descendants
  int64_t sys_ns = 0;
  int64_t max_rss_kb = 0;
  int64_t minor_faults = 0;        // page faults served without I/O (ru_minflt)
  int64_t major_faults = 0;        // page faults that read from disk (ru_majflt)
  std::optional<int> exit_status;  // set when the child exited
  std::optional<int> signal;       // set when the child was killed by a signal

  // The status a shell would report: the exit status, or 128 + signal.
  int shell_status() const { return signal ? 128 + *signal : exit_status.value_or(0); }
  bool succeeded() const { return exit_status && *exit_status == 0; }
};

// Error when the command cannot be started (not found, not executable): the
// message reads "cannot start 'CMD': REASON". Otherwise the measured result,
// whatever the child's exit status.
Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options);

// In a forked child, before exec (async-signal-safe): makes the child die
// with SIGKILL when strata dies, however it dies (PR_SET_PDEATHSIG: kill -9
// included, so that a target never runs on unnoticed, reparented to init),
// and gives it back the signal dispositions strata inherited. `parent` is
// getpid() taken before fork: if strata died before the request took hold,
// the child kills itself at once. The death signal fires when the thread that
// forked exits, so fork from the thread that waits for the child.
void tie_child_to_parent(pid_t parent);

// In a forked child: replaces the process with argv (PATH searched). Where
// exec fails, writes its errno to `error_fd` (the parent's close-on-exec
// pipe: data on it means the command never started) and exits 127.
[[noreturn]] void exec_or_report(const std::vector<std::string>& argv, int error_fd);

// "exited with status 3" / "killed by signal 11 (SIGSEGV)".
std::string describe_termination(const ProcessResult& result);

// This machine's name, for run metadata; "" when it has none.
std::string host_name();

// The whole of a /proc file (maps, stat, status) read with read(2); nullopt
// when it cannot be opened or a read fails. A process that exits between the
// open and the read makes the read fail with ESRCH, which an ifstream's
// filebuf throws as an exception through istreambuf_iterator: callers that
// read another process's files use this instead. (format::read_proc_file is
// the async-signal-safe reader for a producer's own files, inside the target.)
std::optional<std::string> read_proc_text(const std::string& path);

// The fs uid of a live process (the one its files are created with, which
// follows the effective uid), from /proc/PID/status ("Uid: real effective
// saved fs"); nullopt once it is gone or the file is unreadable.
std::optional<uint32_t> process_fs_uid(int pid);

}  // namespace strata
