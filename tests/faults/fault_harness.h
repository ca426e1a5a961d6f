// The fault-injection suite's tools (tests/faults/README.md): start the built
// strata binary as a child with a file-size limit or an odd stdout, send it
// signals at seeded random moments, and check what it left behind: the
// trace at the final name, `.NAME.strata-PID-*` temporaries, the target.
//
// Not thread-safe: one test drives one strata at a time. The test process
// makes itself a child subreaper (PR_SET_CHILD_SUBREAPER) so that a target
// orphaned by a killed strata is re-parented here, where it can be reaped
// and seen to be gone (or killed after the check, so nothing outlives a test).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace strata::faults {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// How strata's stdout is set up.
enum class Stdout { kDevNull, kDevFull, kClosed, kFile };

struct Launch {
  Launch(std::vector<std::string> args_, fs::path cwd_)
      : args(std::move(args_)), cwd(std::move(cwd_)) {}
  std::vector<std::string> args;  // after the strata binary
  fs::path cwd;
  Stdout out = Stdout::kDevNull;
  fs::path stdout_file;                  // with Stdout::kFile
  std::optional<uint64_t> file_size;     // RLIMIT_FSIZE in bytes; SIGXFSZ ignored, so EFBIG
  std::map<std::string, std::string> env;  // set on top of this process's environment
};

struct Finished {
  bool exited = false;  // else killed by `signal`
  int code = -1;        // the exit status when exited
  int signal = 0;
  std::string err;      // strata's stderr
  std::string describe() const;  // "exit 1" or "killed by signal 9 (SIGKILL)"
};

// A started strata; its stderr goes to a file in cwd's parent-free scratch.
class Strata {
 public:
  static Strata start(const Launch& launch);
  pid_t pid() const { return pid_; }
  // Sends `sig` unless strata has already exited (then false: the moment
  // drawn came after strata's end, and the run is an ordinary one).
  bool signal(int sig) const;
  // Waits up to `limit`; past it strata is SIGKILLed and the result says so in err.
  Finished wait(milliseconds limit = milliseconds(30'000));

 private:
  pid_t pid_ = -1;
  fs::path stderr_path_;
};

// Starts, waits, returns (no signal).
Finished run(const Launch& launch, milliseconds limit = milliseconds(30'000));

// The strata binary under test, and the helper programs CMake built.
std::string strata_bin();
std::string spin_target_bin();
std::string test_data(const std::string& relative);

// The leftover temporaries beside traces: `.NAME.strata-*` in `dir`.
std::vector<std::string> strata_temps(const fs::path& dir);

// Polls until `path` exists and holds a decimal pid; nullopt after `limit`.
std::optional<pid_t> wait_for_pid_file(const fs::path& path, milliseconds limit);
// Every pid in `path`, one a line (missing file: none).
std::vector<pid_t> read_pids(const fs::path& path);

// True once `pid` has ended (no /proc entry, or a zombie, which is then
// reaped if it is ours). Polls up to `limit`.
bool gone_within(pid_t pid, milliseconds limit);
// Checks every pid in `pids` is gone within `limit` (total); SIGKILLs and
// reaps those still there, so a failing test leaves nothing running. Returns
// the ones that were still alive.
std::vector<pid_t> survivors(const std::vector<pid_t>& pids, milliseconds limit);

// stderr lines; and the lines that are not notes or warnings (the errors).
std::vector<std::string> lines(const std::string& text);
std::vector<std::string> error_lines(const std::string& err);

std::string read_file(const fs::path& path);
void write_file(const fs::path& path, const std::string& bytes);

// The suite's random source: seeded from STRATA_FAULTS_SEED or at random,
// the seed printed once so that a failure reproduces.
std::mt19937_64& rng();
uint64_t seed();
int64_t uniform_ms(int64_t lo, int64_t hi);  // inclusive

// Makes this process a child subreaper (once).
void become_subreaper();

}  // namespace strata::faults
