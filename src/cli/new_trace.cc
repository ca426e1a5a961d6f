#include "cli/new_trace.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "common/build_info.h"
#include "common/clock_pair.h"
#include "common/launcher_env.h"
#include "common/output_name.h"
#include "common/process.h"

namespace strata::cli {

std::optional<NewTrace> start_trace(const std::optional<std::string>& output, bool force,
                                    const std::string& stem, const std::string& verb,
                                    const std::vector<std::string>& command) {
  std::optional<std::string> requested = output;
  if (requested && has_output_specifiers(*requested)) {
    auto expanded =
        expand_output_name(*requested, {process_env(), static_cast<long>(::getpid()), host_name()});
    if (!expanded) {
      std::fprintf(stderr, "strata: %s\n", expanded.error().message.c_str());
      return std::nullopt;
    }
    requested = std::move(expanded).value();
  }
  auto path = store::choose_output_path(requested, force, stem);
  if (!path) {
    std::fprintf(stderr, "strata: %s\n", path.error().message.c_str());
    return std::nullopt;
  }
  auto writer = store::TraceWriter::create(*path, force);
  if (!writer) {
    std::fprintf(stderr, "strata: %s\n", writer.error().message.c_str());
    return std::nullopt;
  }

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
    std::fprintf(stderr, "strata: %s\n", st.error().message.c_str());
    return std::nullopt;
  }

  store::RunInfo info;
  info.verb = verb;
  info.command = command;
  info.working_directory = std::filesystem::current_path().string();
  info.host = host_name();
  info.tool_version = build::kVersion;
  info.start_ns = rank.clock_realtime_ns;
  return NewTrace{std::move(path).value(), std::move(writer).value(), std::move(info),
                  std::move(rank)};
}

Status write_run_and_commit(NewTrace& trace, const std::function<Status()>& write_rest) {
  STRATA_TRY(trace.writer.write_run(trace.info));
  STRATA_TRY(write_rest());
  return trace.writer.commit();
}

}  // namespace strata::cli
