#include "cli/agent_run.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>

#include "cli/verbs.h"
#include "common/private_dir.h"
#include "common/process.h"
#include "common/signal_forwarder.h"
#include "common/strings.h"
#include "import/spool_files.h"
#include "import/torch_op_links.h"
#include "import/torch_ops_ingest.h"

namespace strata::cli {

namespace fs = std::filesystem;

Result<std::string> find_agent() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path() / ".." / "lib" / "libstrata_agent.so";
    if (fs::exists(installed, ec)) return fs::weakly_canonical(installed, ec).string();
  }
#ifdef STRATA_AGENT_BUILD_PATH
  if (fs::exists(STRATA_AGENT_BUILD_PATH, ec)) return std::string(STRATA_AGENT_BUILD_PATH);
#endif
  return make_error(
      "cannot find libstrata_agent.so (looked in ../lib beside the strata executable and in the "
      "build tree)");
}

Result<std::string> make_run_dir() {
  auto dir = make_private_dir("strata-run");
  if (!dir) return make_error("cannot create a run directory under $TMPDIR");
  return dir;
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

int status_unless_interrupted(const SignalForwarder& interrupts, int status) {
  return interrupts.received() != 0 ? 128 + interrupts.received() : status;
}

int exit_status_after_report(const TargetExit& target, int report_status) {
  if (report_status != kExitOk && target.shell_status() == 0) return report_status;
  return target.shell_status();
}

std::optional<IngestedRun> ingest_agent_run(const std::string& run_dir, const TargetExit& target,
                                            NewTrace& trace,
                                            const std::function<Status()>& before_commit) {
  trace.info.exit_status = target.exit_status;
  trace.info.signal = target.signal;
  IngestedRun run;
  run.spools = import::list_spools(run_dir, import::kAgentSpoolPrefix);
  Status written = trace.writer.write_run(trace.info);
  if (written) {
    auto stats_or = import::ingest_spools(run.spools, trace.writer);
    if (stats_or) {
      run.stats = std::move(*stats_or);
    } else {
      written = stats_or.error();
    }
  }
  // PyTorch ops (libstrata_torch's spools, issue 18): after the CUDA rows,
  // then linked to the CUDA calls made inside them (import/torch_op_links.h).
  import::TorchIngestSummary torch;
  if (written) {
    auto torch_or = import::ingest_torch_spools(run_dir, trace.writer);
    if (torch_or) {
      torch = std::move(*torch_or);
    } else {
      written = torch_or.error();
    }
  }
  if (written && torch.ops > 0) {
    if (auto links = import::link_torch_ops_by_clock(trace.writer); !links) written = links.error();
  }
  run.torch_ops = torch.ops;
  if (written && before_commit) written = before_commit();
  if (written) written = trace.writer.commit();
  written = with_trace_named(trace, std::move(written));
  std::error_code ec;
  fs::remove_all(run_dir, ec);
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", printable(written.error().message).c_str());
    return std::nullopt;
  }
  for (const auto& problem : run.stats.problems) {
    std::fprintf(stderr, "strata: %s\n", printable(problem).c_str());
  }
  for (const auto& line : torch.lines) {
    std::fprintf(stderr, "strata: PyTorch ops: %s\n", printable(line).c_str());
  }
  if (run.stats.damaged_chunks + run.stats.truncated_bytes + torch.damaged > 0) {
    std::fprintf(stderr, "strata: damaged spool data was skipped (see strata_counters)\n");
  }
  return run;
}

}  // namespace strata::cli
