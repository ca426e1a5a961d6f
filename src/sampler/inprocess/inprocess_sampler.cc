#include "sampler/inprocess/inprocess_sampler.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "common/clock.h"
#include "common/signal_forwarder.h"
#include "format/sampler_payloads.h"
#include "sampler/inprocess/sigprof_env.h"

namespace strata::sampler {
namespace {

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

Result<SigprofRun> run_with_sigprof(const std::vector<std::string>& argv,
                                    const SamplerOptions& options,
                                    const std::string& preload_library_path,
                                    SampleErrorKind* kind) {
  auto fail = [&](SampleErrorKind k, std::string message) -> Result<SigprofRun> {
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
  // Mode 0700: spools hold stack bytes.
  auto dir = PrivateDir::make("strata-sigprof");
  if (!dir) {
    return fail(SampleErrorKind::kSystem, temp_parent() +
                                              "/strata-sigprof-XXXXXX: cannot create the spool "
                                              "directory: " +
                                              dir.error().message);
  }

  ScopedEnv env;
  const char* preload = std::getenv("LD_PRELOAD");
  env.set("LD_PRELOAD", preload && *preload ? library + ":" + preload : library);
  env.set(sigprof::kEnvDir, dir->path());
  env.set(sigprof::kEnvHz, std::to_string(options.frequency_hz));
  env.set(sigprof::kEnvStackBytes, std::to_string(options.stack_bytes));

  SignalForwarder forwarder(options.forward_signals);
  int child_pid = -1;
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
  return SigprofRun{std::move(*dir), std::move(ran).value(), child_pid, start, end};
}

}  // namespace strata::sampler
