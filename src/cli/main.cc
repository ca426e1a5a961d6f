// strata's entry point: wires verbs to CLI11 and maps parse errors to exit 2.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "cli/terminal_width.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "common/signal_forwarder.h"
#include "report/table.h"

namespace {

// Reports and exports that never reached the reader must not exit 0: a full
// disk, a closed pipe's reader or `>&-` make stdio's writes fail, and stdio
// only says so through ferror and the last fflush. Checked once here, after
// the verb, for every verb. The verb's own failure status is kept.
int with_stdout_checked(int status) {
  bool failed = std::fflush(stdout) != 0;
  int error = errno;
  if (std::ferror(stdout)) failed = true;
  if (!failed) return status;
  std::fprintf(stderr, "strata: could not write the output to standard output: %s\n",
               std::strerror(error != 0 ? error : EIO));
  return status == strata::cli::kExitOk ? strata::cli::kExitFailed : status;
}

// A user's file-size limit (ulimit -f) makes a write past it raise SIGXFSZ,
// which would kill strata before the write's EFBIG is reported and its
// temporary file removed. A handler, not SIG_IGN: exec resets a handler to
// the default, so the profiled command still gets the limit's usual effect
// (and one started with SIGXFSZ ignored keeps it ignored: it is left alone).
void on_file_size_limit(int) {}

}  // namespace

int main(int argc, char** argv) {
  using namespace strata::cli;
  struct sigaction inherited {};
  sigaction(SIGXFSZ, nullptr, &inherited);
  if (inherited.sa_handler != SIG_IGN) std::signal(SIGXFSZ, on_file_size_limit);
  CLI::App app{"strata: a layered profiler for C++/CUDA and Python/PyTorch programs"};
  app.set_version_flag("--version", std::string("strata ") + strata::build::kVersion);
  app.require_subcommand(1);
  app.fallthrough(false);

  std::map<CLI::App*, VerbRunner> runners;
  auto add = [&](VerbRunner (*adder)(CLI::App&)) {
    VerbRunner run = adder(app);
    runners[app.get_subcommands({}).back()] = std::move(run);
  };
  add(add_bench);
  add(add_cpu);
  add(add_trace);
  add(add_kernels);
  add(add_report);
  add(add_compare);
  add(add_diagnose);
  add(add_export);
  add(add_info);
  add(add_occupancy);
  add(add_version);
  // Every verb that prints a table takes --wide (report::set_text_width).
  bool wide = false;
  for (auto& [sub, run] : runners) {
    if (sub->get_name() == "version") continue;
    sub->add_flag("--wide", wide,
                  "Full names in text tables, however wide (default: fit the terminal)");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "strata: %s (see strata --help)\n", e.what());
    return kExitUsage;
  }
  strata::report::set_text_width(table_width(wide));
  // A stop signal that comes after a recording verb's forwarder is gone
  // still exits 128+N (docs/cli.md, Signals).
  strata::SignalForwarder::exit_on_late_stop_signals();
  for (auto& [sub, run] : runners) {
    if (sub->parsed()) {
      int status = with_stdout_checked(run());
      // A stop signal that reached a forwarder after the verb had chosen a
      // successful status still means "stopped": 128+N (docs/cli.md, Signals).
      if (int sig = strata::SignalForwarder::last_received(); sig != 0 && status == kExitOk) {
        status = 128 + sig;
      }
      return status;
    }
  }
  return kExitUsage;
}
