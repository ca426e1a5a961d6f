#include "common/signal_forwarder.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace strata {
namespace {

enum class Kind { kNone, kStop, kForward, kDrop };

Kind kind_of(int sig) {
  switch (sig) {
    case SIGHUP:
    case SIGINT:
    case SIGQUIT:
    case SIGTERM:
    case SIGALRM:
    case SIGVTALRM:
    case SIGPROF:
    case SIGXCPU:
    case SIGPWR:
    case SIGSTKFLT:
    case SIGIO:
      return Kind::kStop;
    case SIGUSR1:
    case SIGUSR2:
      return Kind::kForward;
    case SIGPIPE:
    case SIGXFSZ:
      return Kind::kDrop;
    default:
      return sig >= SIGRTMIN && sig <= SIGRTMAX ? Kind::kStop : Kind::kNone;
  }
}

std::atomic<pid_t> g_child{0};
volatile sig_atomic_t g_pending_signal = 0;
volatile sig_atomic_t g_received_signal = 0;
pid_t g_owner = 0;  // the process that installed the handlers
int g_depth = 0;  // live enabled forwarders; only the thread running the child changes it
bool g_exit_on_late_stop = false;  // exit_on_late_stop_signals()

// What strata had before the outermost forwarder, per signal; installed[sig]
// marks the ones it replaced (not those inherited as ignored).
struct sigaction g_old[NSIG];
bool g_installed[NSIG];

void on_signal(int sig, siginfo_t* info, void*) {
  if (getpid() != g_owner) {
    // A child forked by strata, signalled before restore_in_child ran (the
    // parent forwards as soon as fork returns): act as the child would
    // without strata. The signal is blocked here and arrives on return.
    sigaction(sig, &g_old[sig], nullptr);
    raise(sig);
    return;
  }
  const Kind kind = kind_of(sig);
  if (kind == Kind::kDrop) return;  // the write that raised it fails with EPIPE/EFBIG
  if (kind == Kind::kStop) g_received_signal = sig;
  if (info && info->si_code == SI_KERNEL) return;  // the terminal's: the child has it too
  const int saved = errno;
  const pid_t child = g_child.load(std::memory_order_relaxed);
  if (child > 0) {
    kill(child, sig);
  } else if (kind == Kind::kStop) {
    g_pending_signal = sig;
  }
  errno = saved;
}

void install_all() {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    g_installed[sig] = false;
    if (kind_of(sig) == Kind::kNone) continue;
    if (sigaction(sig, nullptr, &g_old[sig]) != 0) continue;
    if (!(g_old[sig].sa_flags & SA_SIGINFO) && g_old[sig].sa_handler == SIG_IGN) continue;
    if (sigaction(sig, &sa, nullptr) == 0) g_installed[sig] = true;
  }
}

// After the outermost forwarder: the verb is done, strata is exiting.
void on_late_stop_signal(int sig) {
  _exit(128 + sig);
}

void restore_all() {
  struct sigaction late {};
  late.sa_handler = on_late_stop_signal;
  sigemptyset(&late.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (!g_installed[sig]) continue;
    const bool exit_late = g_exit_on_late_stop && kind_of(sig) == Kind::kStop;
    sigaction(sig, exit_late ? &late : &g_old[sig], nullptr);
    g_installed[sig] = false;
  }
}

}  // namespace

SignalForwarder::SignalForwarder(bool enabled) : enabled_(enabled) {
  if (!enabled_) return;
  if (g_depth++ > 0) return;  // an outer forwarder holds the handlers and the state
  g_child.store(0);
  g_pending_signal = 0;
  g_received_signal = 0;
  g_owner = getpid();
  install_all();
}

SignalForwarder::~SignalForwarder() {
  if (!enabled_) return;
  if (--g_depth > 0) return;
  restore_all();
  g_child.store(0);
}

void SignalForwarder::set_child(pid_t pid) {
  if (enabled_) track_child(pid);
}

void SignalForwarder::track_child(pid_t pid) {
  if (g_depth == 0) return;
  g_child.store(pid > 0 ? pid : 0);
  if (pid > 0 && g_pending_signal != 0) {
    kill(pid, g_pending_signal);
    g_pending_signal = 0;
  }
}

int SignalForwarder::received() const {
  return g_received_signal;
}

int SignalForwarder::last_received() {
  return g_received_signal;
}

void SignalForwarder::restore_in_child() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (g_installed[sig]) sigaction(sig, &g_old[sig], nullptr);
  }
}

void SignalForwarder::exit_on_late_stop_signals() {
  g_exit_on_late_stop = true;
}

bool SignalForwarder::is_stop_signal(int sig) {
  return kind_of(sig) == Kind::kStop;
}

}  // namespace strata
