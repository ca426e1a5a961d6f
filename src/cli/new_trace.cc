#include "cli/new_trace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cli/verbs.h"
#include "common/atomic_file.h"
#include "common/build_info.h"
#include "common/clock_pair.h"
#include "common/launcher_env.h"
#include "common/output_name.h"
#include "common/process.h"
#include "common/strings.h"

namespace strata::cli {

std::variant<NewTrace, int> start_trace(const std::optional<std::string>& output, bool force,
                                        const std::string& stem, const std::string& verb,
                                        const std::vector<std::string>& command) {
  auto fail = [](int status, const std::string& message) {
    std::fprintf(stderr, "strata: %s\n", printable(message).c_str());
    return std::variant<NewTrace, int>(status);
  };
  std::optional<std::string> requested = output;
  if (requested && has_output_specifiers(*requested)) {
    auto expanded =
        expand_output_name(*requested, {process_env(), static_cast<long>(::getpid()), host_name()});
    if (!expanded) return fail(kExitUsage, expanded.error().message);
    requested = std::move(expanded).value();
  }
  if (requested && requested->empty()) return fail(kExitUsage, "-o '': empty output file name");
  // Everything about the output is checked here, before the target runs, and
  // alone: a temporary is made beside it and dropped again, so a missing or
  // unwritable directory, a directory at the name or, without --force, a
  // taken name is a usage error (2), and what fails after it is writing the
  // trace (1: a full disk).
  auto claim = requested
                   ? AtomicFile::create(*requested, force ? Existing::kReplace : Existing::kRefuse)
                   : AtomicFile::create(stem + "1.sqlite", Existing::kReplace);
  if (!claim) return fail(kExitUsage, claim.error().message);
  claim = Error{};  // drops the temporary
  auto writer = requested ? store::TraceWriter::create(*requested, force)
                          : store::TraceWriter::create_numbered(stem);
  if (!writer) return fail(kExitFailed, writer.error().message);

  LauncherEnv launcher = detect_launcher_env(process_env());
  for (const auto& problem : launcher.problems) {
    std::fprintf(stderr, "strata: warning: %s; the trace records no value for it\n",
                 problem.c_str());
  }
  store::RankRow rank;
  rank.rank = launcher.rank;
  rank.local_rank = launcher.local_rank;
  rank.world_size = launcher.world_size;
  rank.local_world_size = launcher.local_world_size;
  rank.launcher = launcher.launcher;
  rank.job_id = launcher.job_id;
  rank.variables = launcher.variables;
  rank.boot_id = boot_id();
  ClockPairReading clocks = read_clock_pair();
  rank.clock_monotonic_ns = clocks.monotonic_ns;
  rank.clock_realtime_ns = clocks.realtime_ns;
  rank.clock_error_ns = clocks.error_ns;
  if (auto st = store::write_rank_row(*writer, rank); !st) {
    return fail(kExitFailed, st.error().message);
  }

  store::RunInfo info;
  info.verb = verb;
  info.command = command;
  info.working_directory = std::filesystem::current_path().string();
  info.host = host_name();
  info.tool_version = build::kVersion;
  info.start_ns = rank.clock_realtime_ns;
  return NewTrace{std::move(writer).value(), std::move(info), std::move(rank)};
}

Status write_run_and_commit(NewTrace& trace, const std::function<Status()>& write_rest) {
  Status written = trace.writer.write_run(trace.info);
  if (written) written = write_rest();
  if (written) written = trace.writer.commit();
  return with_trace_named(trace, std::move(written));
}

Status with_trace_named(const NewTrace& trace, Status status) {
  if (status || status.error().message.find(trace.path()) != std::string::npos) return status;
  return make_error("cannot write '" + trace.path() + "': " + status.error().message);
}

std::optional<std::string> command_start_problem(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return "cannot start '': empty command";
  const std::string& name = argv[0];
  auto problem = [&](int err) { return "cannot start '" + name + "': " + std::strerror(err); };
  auto check = [](const std::string& file) -> int {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) return errno;
    if (!S_ISREG(st.st_mode) || ::access(file.c_str(), X_OK) != 0) return EACCES;
    return 0;
  };
  // As execvp: a name with a slash is a path; else each PATH entry in turn
  // (an empty entry is the current directory), and EACCES wins over ENOENT
  // when some entry held a file that cannot be run.
  if (name.find('/') != std::string::npos) {
    int err = check(name);
    return err == 0 ? std::nullopt : std::optional(problem(err));
  }
  const char* env_path = std::getenv("PATH");
  std::string search = env_path != nullptr ? env_path : "/bin:/usr/bin";
  bool denied = false;
  size_t start = 0;
  for (;;) {
    size_t end = search.find(':', start);
    std::string dir = search.substr(start, end == std::string::npos ? end : end - start);
    int err = check((dir.empty() ? std::string(".") : dir) + "/" + name);
    if (err == 0) return std::nullopt;
    if (err == EACCES) denied = true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return problem(denied ? EACCES : ENOENT);
}

}  // namespace strata::cli
