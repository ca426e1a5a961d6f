// Keeps strata alive through the signals that would otherwise kill it in the
// middle of a run (and lose the trace, leaving its hidden temporary file
// behind): while a SignalForwarder lives, they go on to the child strata
// runs, and the last one that stops a run is remembered so that the verb
// stops after the run and still reports, writes and commits what it measured
// (docs/cli.md, "Signals").
//
// Which signals, and why:
//  - stop signals: SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGVTALRM,
//    SIGPROF, SIGXCPU, SIGPWR, SIGSTKFLT, SIGIO and the real-time signals —
//    every catchable signal whose default action ends a process, sent from
//    outside (kill, timeout, a hangup, a batch system). Forwarded to the
//    child, remembered: received() returns it and the verb exits 128+N.
//  - SIGUSR1, SIGUSR2: the program's own control signals (dd prints its
//    progress, a server reopens its logs). Forwarded, not remembered: strata
//    carries on, as the program would have.
//  - SIGPIPE, SIGXFSZ: raised by strata's own writes (a closed pipe on stdout,
//    a file size limit). Caught and dropped, so that the write fails with
//    EPIPE/EFBIG and strata says so and exits 1 instead of dying silently.
//  - not caught: SIGKILL and SIGSTOP (cannot be), the faults of strata itself
//    (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS: its state is
//    not to be trusted; the child dies with it through PR_SET_PDEATHSIG and
//    the next run removes the stale temporary file), job control (SIGTSTP,
//    SIGTTIN, SIGTTOU, SIGCONT) and what is ignored by default (SIGCHLD,
//    SIGWINCH, SIGURG).
// A signal strata inherited as ignored (nohup) stays ignored, and the child
// inherits it so, as it would without strata.
//
// Threading: the handler state is global. Forwarders nest: the outermost one
// installs the handlers and restores them when it goes, inner ones (the
// sampler's, run_process users') share its state, so a verb can hold one
// from before the run until its trace is committed. Construct and destroy
// them on the thread that runs the child.
// A terminal's Ctrl-C or Ctrl-\ (si_code SI_KERNEL) already reached the
// child, which shares strata's process group, so it is not delivered twice.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace strata {

class SignalForwarder {
 public:
  explicit SignalForwarder(bool enabled = true);
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;

  // The child to forward to (0 or -1: none). A stop signal that arrived
  // while there was no child is delivered to the next one.
  void set_child(pid_t pid);

  // The last stop signal strata received while forwarding; 0 if none.
  int received() const;
  // The same after the forwarders are gone: the last stop signal the most
  // recent outermost forwarder received. main() reads it once the verb has
  // returned, for a signal that came after the verb chose its status but
  // before its forwarder was destroyed.
  static int last_received();

  // For run_process: the same as set_child on the live forwarders; nothing
  // when none is alive.
  static void track_child(pid_t pid);

  // In a forked child before exec (async-signal-safe): gives back the
  // dispositions strata inherited for the signals the forwarders catch, so
  // that the command starts as it would without strata.
  static void restore_in_child();

  // Whether `sig` stops a run (see the list above).
  static bool is_stop_signal(int sig);

  // For main, before it runs a verb: when the outermost forwarder goes, the
  // stop signals it caught get a handler that _exits 128+N instead of their
  // old disposition. By then the verb has committed its trace; what is left
  // is strata's own exit (destructors, a sanitizer's leak check), and a signal
  // landing there must still give the documented status, not a death by the
  // signal (with a core dump for SIGQUIT). Switched per signal in one
  // sigaction, so no signal falls between the two handlers.
  static void exit_on_late_stop_signals();

 private:
  bool enabled_;
};

}  // namespace strata
