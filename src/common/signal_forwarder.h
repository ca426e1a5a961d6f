// Forwards SIGINT and SIGTERM sent to strata on to the child it runs, for as
// long as the object lives, and remembers the last such signal so a verb can
// stop after the run and still report and write what it measured.
//
// Threading: one SignalForwarder at a time per process (the handler state is
// global); construct and destroy it on the thread that runs the child.
// A terminal's Ctrl-C (si_code SI_KERNEL) already reached the child, which
// shares strata's process group, so it is not delivered a second time.
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

  // The child to forward to (0 or -1: none). A signal that arrived while
  // there was no child is delivered to the next one.
  void set_child(pid_t pid);

  // The last SIGINT/SIGTERM strata received while forwarding; 0 if none.
  int received() const;

 private:
  bool enabled_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace strata
