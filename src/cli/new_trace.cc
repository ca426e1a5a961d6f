#include "cli/new_trace.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/build_info.h"
#include "common/clock.h"
#include "common/launcher_env.h"
#include "common/output_name.h"
#include "common/process.h"

namespace strata::cli {
namespace {

// CLOCK_REALTIME read between two CLOCK_MONOTONIC readings; the tightest of a
// few tries. The realtime reading lies within the monotonic pair, so taking
// their midpoint as "the same moment" is off by at most half their gap.
void sample_clock_pair(store::RankRow& row) {
  int64_t best_gap = INT64_MAX;
  for (int i = 0; i < 5; ++i) {
    int64_t m1 = monotonic_ns();
    int64_t r = realtime_ns();
    int64_t m2 = monotonic_ns();
    if (m2 - m1 < best_gap) {
      best_gap = m2 - m1;
      row.clock_monotonic_ns = m1 + (m2 - m1) / 2;
      row.clock_realtime_ns = r;
      row.clock_error_ns = (m2 - m1 + 1) / 2;
    }
  }
}

// The kernel's boot id: processes that see the same one share CLOCK_MONOTONIC
// (outside time namespaces, which offset it).
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace

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
  sample_clock_pair(rank);
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

}  // namespace strata::cli
