#include "agent/signal_chain.h"

#include <cerrno>
#include <cstring>

namespace strata::agent {

namespace {

struct State {
  SignalHook hook = nullptr;
  int signals[8] = {};
  int count = 0;
  struct sigaction previous[SignalChain::kMaxSignal + 1];
};
State g_state;

bool is_function(const struct sigaction& action) {
  if (action.sa_flags & SA_SIGINFO) return action.sa_sigaction != nullptr;
  return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

void handle(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  const struct sigaction& previous = g_state.previous[sig];
  bool crash = SignalChain::is_crash_signal(sig);
  if (!crash && !(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) {
    errno = saved_errno;
    return;
  }
  bool chained = !crash && is_function(previous);
  if (g_state.hook != nullptr) g_state.hook(sig, !chained);
  if (chained) {
    if (previous.sa_flags & SA_SIGINFO) {
      previous.sa_sigaction(sig, info, context);
    } else {
      previous.sa_handler(sig);
    }
    errno = saved_errno;
    return;
  }
  // Hand the signal back to whoever had it, then let it happen again. A
  // hardware fault (si_code > 0) recurs when the instruction re-executes; a
  // sent signal (kill, raise, abort: si_code <= 0) is raised again and stays
  // pending until this handler returns.
  sigaction(sig, &previous, nullptr);
  if (info == nullptr || info->si_code <= 0 || !crash) raise(sig);
  errno = saved_errno;
}

}  // namespace

bool SignalChain::is_crash_signal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE || sig == SIGILL;
}

bool SignalChain::install(const int* signals, int count, SignalHook hook) {
  if (g_state.count != 0 || count <= 0 || count > 8) return false;
  g_state.hook = hook;
  bool ok = true;
  for (int i = 0; i < count; ++i) {
    int sig = signals[i];
    if (sig <= 0 || sig > kMaxSignal) {
      ok = false;
      continue;
    }
    struct sigaction previous;
    if (sigaction(sig, nullptr, &previous) != 0) {
      ok = false;
      continue;
    }
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = handle;
    sigemptyset(&action.sa_mask);
    // SA_ONSTACK: a stack overflow can only be handled on an alternate stack,
    // where the program set one up. SA_RESTART only if the program asked for
    // it, so that its system calls see EINTR exactly as before.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | (previous.sa_flags & SA_RESTART);
    g_state.previous[sig] = previous;
    if (sigaction(sig, &action, nullptr) != 0) {
      ok = false;
      continue;
    }
    g_state.signals[g_state.count++] = sig;
  }
  return ok;
}

void SignalChain::uninstall() {
  for (int i = 0; i < g_state.count; ++i) {
    int sig = g_state.signals[i];
    sigaction(sig, &g_state.previous[sig], nullptr);
  }
  g_state.count = 0;
  g_state.hook = nullptr;
}

}  // namespace strata::agent
