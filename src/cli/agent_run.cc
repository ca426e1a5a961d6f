#include "cli/agent_run.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>

#include "cli/verbs.h"
#include "common/process.h"
#include "common/signal_forwarder.h"

namespace strata::cli {

namespace fs = std::filesystem;

std::optional<std::string> find_agent() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path() / ".." / "lib" / "libstrata_agent.so";
    if (fs::exists(installed, ec)) return fs::weakly_canonical(installed, ec).string();
  }
#ifdef STRATA_AGENT_BUILD_PATH
  if (fs::exists(STRATA_AGENT_BUILD_PATH, ec)) return std::string(STRATA_AGENT_BUILD_PATH);
#endif
  return std::nullopt;
}

std::optional<std::string> make_run_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/strata-run-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) return std::nullopt;
  return templ;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

Result<TargetExit> run_forwarding_signals(const std::vector<std::string>& command,
                                          int* error_status) {
  SignalForwarder forwarder;
  ProcessOptions po;
  po.on_child = [&](int pid) { forwarder.set_child(pid); };
  auto result = run_process(command, po);
  if (!result) {
    *error_status = kExitCannotStart;
    return result.error();
  }
  TargetExit run;
  run.exit_status = result->exit_status;
  run.signal = result->signal;
  if (result->signal) {
    std::fprintf(stderr, "strata: the target was %s; what it recorded is kept\n",
                 describe_termination(*result).c_str());
  }
  return run;
}

Result<ingest::IngestStats> ingest_run(const std::string& run_dir,
                                       const std::vector<std::string>& spools,
                                       store::TraceWriter& writer, const store::RunInfo& info,
                                       const std::function<Status()>& before_commit) {
  std::error_code ec;
  Status written = writer.write_run(info);
  std::optional<ingest::IngestStats> ingested;
  if (written) {
    auto stats_or = ingest::ingest_spools(spools, writer);
    if (stats_or) {
      ingested = std::move(*stats_or);
    } else {
      written = stats_or.error();
    }
  }
  if (written && before_commit) written = before_commit();
  if (written) written = writer.commit();
  fs::remove_all(run_dir, ec);
  if (!written) return written.error();
  for (const auto& problem : ingested->problems) {
    std::fprintf(stderr, "strata: %s\n", problem.c_str());
  }
  if (ingested->damaged_chunks + ingested->truncated_bytes > 0) {
    std::fprintf(stderr, "strata: damaged spool data was skipped (see strata_counters)\n");
  }
  return std::move(*ingested);
}

}  // namespace strata::cli
