// SignalChain: the agent's handlers for fatal signals, installed in front of
// whatever the program had (sigaction chaining), so that a dying process
// still leaves its queued trace data on disk and still dies of its signal.
//
// What the handler does for signal S, after running the agent's hook:
// - S is a crash signal (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL): the
//   previous action is put back and S is delivered again with it (a fault
//   re-executes the faulting instruction on return; a sent signal is
//   re-raised), so the program's own crash handler, or the default action
//   with its exit status and core dump, still happens. The hook is told the
//   process is terminating.
// - S is SIGTERM/SIGINT and the program had a handler (Python's SIGINT
//   handler, say): that handler is called directly and ours stays installed;
//   the program may well survive, so the hook is told it is not terminating.
// - S is SIGTERM/SIGINT with the default action: as for a crash signal.
// - the previous action was SIG_IGN for SIGTERM/SIGINT: nothing happens.
//
// Threading and signals: install/uninstall are init/teardown-time, once, not
// thread-safe. The handler itself uses only async-signal-safe calls
// (sigaction, raise) and restores errno; the hook must be signal-safe too.
// Allocation: none (the previous actions live in static storage).
#pragma once

#include <csignal>

namespace strata::agent {

// Called from the signal handler. `terminating`: the process is about to
// die of `sig` (flush and close); false: a program handler takes over and
// the process may go on (do not close anything).
using SignalHook = void (*)(int sig, bool terminating);

class SignalChain {
 public:
  static constexpr int kMaxSignal = 64;

  // Installs the handler for each of `signals` (at most 8), remembering the
  // previous actions. Returns false when one sigaction failed (the others
  // stay installed) or when already installed.
  static bool install(const int* signals, int count, SignalHook hook);
  // Puts the previous actions back (tests, and a child that stops tracing).
  static void uninstall();
  static bool is_crash_signal(int sig);
};

}  // namespace strata::agent
