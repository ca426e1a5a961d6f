#include "sampler/inprocess/inprocess_sampler.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "common/clock.h"
#include "common/process.h"
#include "common/signal_forwarder.h"
#include "format/sampler_payloads.h"
#include "format/spool_reader.h"
#include "sampler/inprocess/sigprof_decode.h"
#include "sampler/inprocess/sigprof_env.h"

namespace strata::sampler {
namespace {

namespace sp = sigprof;

// Sets environment variables for the child and restores the previous values.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

  void set(const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A private directory for the spools, removed with what it holds.
class TempDir {
 public:
  static Result<TempDir> make() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/strata-sigprof-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {  // mode 0700: spools hold stack bytes
      return make_error(pattern + ": cannot create the spool directory: " + std::strerror(errno));
    }
    return TempDir(buf.data());
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    if (path_.empty()) return;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) {
          unlink((path_ + "/" + e->d_name).c_str());
        }
      }
      closedir(d);
    }
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

std::vector<std::string> spool_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind("sigprof-", 0) == 0 && name.size() > 4 &&
          name.compare(name.size() - 4, 4, ".bin") == 0) {
        out.push_back(dir + "/" + name);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool exists(const std::string& path) {
  return !path.empty() && access(path.c_str(), R_OK) == 0;
}

std::string self_exe_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  size_t slash = exe.rfind('/');
  return slash == std::string::npos ? "" : exe.substr(0, slash);
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string find_sigprof_library() {
  if (const char* env = std::getenv("STRATA_SIGPROF_LIB"); env && *env) {
    return exists(env) ? env : "";
  }
  std::string dir = self_exe_dir();
  if (!dir.empty()) {
    std::string beside = dir + "/../lib/libstrata_sigprof.so";
    if (exists(beside)) {
      char real[4096];
      return realpath(beside.c_str(), real) ? std::string(real) : beside;
    }
  }
#ifdef STRATA_SIGPROF_LIB
  if (exists(STRATA_SIGPROF_LIB)) return STRATA_SIGPROF_LIB;
#endif
  return "";
}

RawProfile read_sigprof_dir(const std::string& dir, const SamplerOptions& options) {
  RawProfile profile;
  profile.mode = StackMode::kDwarf;
  profile.frequency_hz = options.frequency_hz ? options.frequency_hz : sp::kDefaultHz;
  profile.period_ns = 1'000'000'000ull / profile.frequency_hz;
  profile.stack_bytes = std::min(options.stack_bytes, format::kSamplerMaxStackBytes) & ~7u;
  profile.regs_mask = kDwarfRegsMask;
  profile.regs_per_sample = format::kSamplerRegsPerSample;
  profile.layout.sample_regs_user = kDwarfRegsMask;

  // Open all first so that images are merged oldest first: after an exec
  // under the same pid, the new image's mappings come later and win.
  std::vector<format::SpoolReader> readers;
  for (const std::string& path : spool_files(dir)) {
    auto reader = format::SpoolReader::open(path);
    if (!reader) {
      ++profile.counters.bad_records;
      profile.notes.push_back(reader.error().message + "; skipped");
      continue;
    }
    readers.push_back(std::move(reader).value());
  }
  std::stable_sort(readers.begin(), readers.end(), [](const auto& a, const auto& b) {
    return a.header().start_clock_ns < b.header().start_clock_ns;
  });

  std::vector<sp::SpoolSummary> summaries;
  for (auto& reader : readers) {
    sp::SpoolSummary s = sp::add_sigprof_spool(reader, &profile);
    const std::string& name = reader.name();
    const format::SpoolStats& st = s.stats;
    profile.counters.records += st.chunks_ok;
    profile.counters.bad_records += st.crc_failures + s.bad_records;
    profile.counters.bad_bytes += st.skipped_bytes + st.truncated_bytes;
    profile.counters.unknown_records += st.unknown_kinds;
    if (st.crc_failures + s.bad_records > 0) {
      profile.notes.push_back(
          name + ": " + plural(st.crc_failures + s.bad_records, "damaged chunk", "damaged chunks") +
          " skipped");
    }
    if (st.truncated_bytes > 0) {
      profile.notes.push_back(name + ": ends mid-chunk (the process died while writing); " +
                              std::to_string(st.truncated_bytes) + " bytes dropped");
    }
    if (s.have_counters) {
      const auto& t = s.counters.totals;
      profile.counters.lost_samples += t[format::kSamplesDropped];
      if (t[format::kSamplesDropped] > 0) {
        profile.notes.push_back("pid " + std::to_string(s.pid) + ": " +
                                plural(t[format::kSamplesDropped], "sample", "samples") +
                                " dropped (a timer signal found its thread's buffer busy)");
      }
      if (t[format::kThreadsUnsampled] > 0) {
        profile.notes.push_back("pid " + std::to_string(s.pid) + ": " +
                                plural(t[format::kThreadsUnsampled], "thread was", "threads were") +
                                " not sampled (no timer could be started)");
      }
      if (t[format::kHandlerReplaced] != 0) {
        profile.notes.push_back("pid " + std::to_string(s.pid) +
                                ": the program installed its own SIGPROF handler; samples stop "
                                "where it did");
      }
      if (t[format::kFlushFailures] > 0) {
        profile.notes.push_back(
            "pid " + std::to_string(s.pid) + ": " +
            plural(t[format::kFlushFailures], "sample buffer", "sample buffers") +
            " could not be written (disk full?)");
      }
    }
    summaries.push_back(std::move(s));
  }

  // Processes the target forked: FORK events so that a child starts from
  // its parent's mappings, as perf's inherit gives.
  std::set<uint32_t> pids;
  for (const auto& s : summaries) pids.insert(s.pid);
  std::set<uint32_t> forked;
  for (const auto& s : summaries) {
    if (!s.has_process_info || s.ppid == s.pid || !pids.count(s.ppid)) continue;
    if (!forked.insert(s.pid).second) continue;
    TaskEvent t;
    t.fork = true;
    t.time = static_cast<uint64_t>(s.start_ns);
    t.pid = s.pid;
    t.ppid = s.ppid;
    t.tid = s.pid;
    t.ptid = s.ppid;
    profile.tasks.push_back(t);
  }

  std::stable_sort(profile.samples.begin(), profile.samples.end(),
                   [](const Sample& a, const Sample& b) { return a.time < b.time; });

  // CPU-time timers expire on the scheduler tick (CONFIG_HZ), so a rate
  // above it yields fewer signals, each carrying its overruns in its period.
  uint64_t periods = 0;
  for (const Sample& s : profile.samples) periods += s.period / profile.period_ns;
  if (profile.samples.size() >= 20 && periods >= 2 * profile.samples.size()) {
    const double per_signal = static_cast<double>(periods) / profile.samples.size();
    char text[200];
    std::snprintf(text, sizeof text,
                  "the kernel delivered thread CPU-time timers at about %.0f Hz (its tick), not "
                  "%u Hz: each sample stands for %.1f periods",
                  profile.frequency_hz / per_signal, profile.frequency_hz, per_signal);
    profile.notes.push_back(text);
  }
  return profile;
}

Result<RawProfile> sample_command_in_process(const std::vector<std::string>& argv,
                                             const SamplerOptions& options,
                                             const std::string& preload_library_path,
                                             SampleErrorKind* kind) {
  auto fail = [&](SampleErrorKind k, std::string message) -> Result<RawProfile> {
    if (kind) *kind = k;
    return make_error(std::move(message));
  };
  if (kind) *kind = SampleErrorKind::kNone;
  if (argv.empty()) return fail(SampleErrorKind::kSystem, "empty command");
  if (options.frequency_hz == 0 || options.frequency_hz > 100000) {
    return fail(
        SampleErrorKind::kSystem,
        "sampling frequency " + std::to_string(options.frequency_hz) + " Hz: use 1 to 100000");
  }
  if (options.stack_bytes > format::kSamplerMaxStackBytes) {
    return fail(SampleErrorKind::kSystem, "stack copy size " + std::to_string(options.stack_bytes) +
                                              ": at most " +
                                              std::to_string(format::kSamplerMaxStackBytes));
  }
  char real[4096];
  if (preload_library_path.empty() || !realpath(preload_library_path.c_str(), real) ||
      access(real, R_OK) != 0) {
    return fail(SampleErrorKind::kSystem,
                "in-process sampler library not found" +
                    (preload_library_path.empty() ? std::string() : ": " + preload_library_path));
  }
  const std::string library = real;
  // ld.so splits LD_PRELOAD at spaces and colons.
  if (library.find_first_of(" :") != std::string::npos) {
    return fail(SampleErrorKind::kSystem,
                library + ": a preload library path cannot hold spaces or colons");
  }
  auto dir = TempDir::make();
  if (!dir) return fail(SampleErrorKind::kSystem, dir.error().message);

  RawProfile profile;
  std::optional<ProcessResult> result;
  int child_pid = -1;
  {
    ScopedEnv env;
    const char* preload = std::getenv("LD_PRELOAD");
    env.set("LD_PRELOAD", preload && *preload ? library + ":" + preload : library);
    env.set(sp::kEnvDir, dir->path());
    env.set(sp::kEnvHz, std::to_string(options.frequency_hz));
    env.set(sp::kEnvStackBytes, std::to_string(options.stack_bytes));

    SignalForwarder forwarder(options.forward_signals);
    ProcessOptions po;
    po.on_child = [&](int pid) {
      forwarder.set_child(pid > 0 ? pid : 0);
      if (pid > 0) child_pid = pid;
      if (options.on_child) options.on_child(pid);
    };
    const int64_t start = monotonic_ns();
    auto ran = run_process(argv, po);
    const int64_t end = monotonic_ns();
    if (!ran) return fail(SampleErrorKind::kCannotStart, ran.error().message);
    result = std::move(ran).value();
    profile = read_sigprof_dir(dir->path(), options);
    profile.start_ns = start;
    profile.end_ns = end;
  }
  if (spool_files(dir->path()).empty()) {
    return fail(SampleErrorKind::kSystem,
                "'" + argv[0] +
                    "' was not sampled: the in-process sampler needs a dynamically linked "
                    "program (LD_PRELOAD); statically linked and setuid programs ignore it");
  }
  profile.child_pid = child_pid;
  profile.exit_status = result->exit_status;
  profile.signal = result->signal;
  profile.user_ns = result->user_ns;
  profile.sys_ns = result->sys_ns;
  if (options.mode == StackMode::kFramePointer) {
    profile.notes.push_back(
        "the in-process sampler copies stacks for DWARF unwinding; --call-graph fp does not apply");
  }
  return profile;
}

}  // namespace strata::sampler
