#include "common/signal_forwarder.h"

#include <atomic>
#include <cerrno>

namespace strata {
namespace {

std::atomic<pid_t> g_child{0};
volatile sig_atomic_t g_pending_signal = 0;
volatile sig_atomic_t g_received_signal = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  g_received_signal = sig;
  if (info && info->si_code == SI_KERNEL) return;  // the terminal's: the child has it too
  const int saved = errno;
  const pid_t child = g_child.load(std::memory_order_relaxed);
  if (child > 0) {
    kill(child, sig);
  } else {
    g_pending_signal = sig;
  }
  errno = saved;
}

}  // namespace

SignalForwarder::SignalForwarder(bool enabled) : enabled_(enabled) {
  if (!enabled_) return;
  g_child.store(0);
  g_pending_signal = 0;
  g_received_signal = 0;
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

SignalForwarder::~SignalForwarder() {
  if (!enabled_) return;
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  g_child.store(0);
}

void SignalForwarder::set_child(pid_t pid) {
  if (!enabled_) return;
  g_child.store(pid > 0 ? pid : 0);
  if (pid > 0 && g_pending_signal != 0) {
    kill(pid, g_pending_signal);
    g_pending_signal = 0;
  }
}

int SignalForwarder::received() const {
  return g_received_signal;
}

}  // namespace strata
