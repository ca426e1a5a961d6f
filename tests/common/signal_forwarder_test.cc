// SignalForwarder's contract (common/signal_forwarder.h): which signals stop
// a run, which are only forwarded, which are dropped, nesting, inherited
// SIG_IGN; and run_process's children dying with their parent.
#include "common/signal_forwarder.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/process.h"

namespace strata {
namespace {

using namespace std::chrono_literals;

// A child that waits to be signalled; its death signal once reaped.
class SleepingChild {
 public:
  SleepingChild() {
    pid_ = fork();
    if (pid_ == 0) {
      SignalForwarder::restore_in_child();
      for (;;) pause();
    }
  }
  ~SleepingChild() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  int death_signal() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

TEST(SignalForwarderTest, StopSignalsAreForwardedAndRemembered) {
  for (int sig : {SIGHUP, SIGQUIT, SIGTERM, SIGINT, SIGALRM, SIGXCPU}) {
    SignalForwarder forwarder;
    SleepingChild child;
    forwarder.set_child(child.pid());
    kill(getpid(), sig);  // this test process survives it
    EXPECT_EQ(forwarder.received(), sig) << sigabbrev_np(sig);
    EXPECT_EQ(child.death_signal(), sig) << sigabbrev_np(sig);
  }
}

TEST(SignalForwarderTest, UsrSignalsAreTheChildsAndDoNotStopTheRun) {
  SignalForwarder forwarder;
  SleepingChild child;
  forwarder.set_child(child.pid());
  kill(getpid(), SIGUSR1);
  EXPECT_EQ(forwarder.received(), 0);
  EXPECT_EQ(child.death_signal(), SIGUSR1);
}

TEST(SignalForwarderTest, SigpipeIsDroppedNotForwarded) {
  SignalForwarder forwarder;
  SleepingChild child;
  forwarder.set_child(child.pid());
  kill(getpid(), SIGPIPE);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  EXPECT_EQ(write(fds[1], "x", 1), -1);  // EPIPE instead of death
  EXPECT_EQ(errno, EPIPE);
  close(fds[1]);
  EXPECT_EQ(forwarder.received(), 0);
  kill(child.pid(), SIGTERM);
  EXPECT_EQ(child.death_signal(), SIGTERM) << "SIGPIPE reached the child";
}

TEST(SignalForwarderTest, ASignalBeforeTheChildIsDeliveredToIt) {
  SignalForwarder forwarder;
  kill(getpid(), SIGHUP);
  SleepingChild child;
  forwarder.set_child(child.pid());
  EXPECT_EQ(child.death_signal(), SIGHUP);
  EXPECT_EQ(forwarder.received(), SIGHUP);
}

TEST(SignalForwarderTest, NestedForwardersShareOneStateUntilTheOutermostGoes) {
  struct sigaction before {};
  sigaction(SIGHUP, nullptr, &before);
  {
    SignalForwarder outer;
    {
      SignalForwarder inner;
      SleepingChild child;
      inner.set_child(child.pid());
      kill(getpid(), SIGTERM);
      EXPECT_EQ(child.death_signal(), SIGTERM);
      inner.set_child(0);
    }
    // The inner one is gone, the handlers are not: a signal now still stops
    // the verb instead of killing it.
    kill(getpid(), SIGHUP);
    EXPECT_EQ(outer.received(), SIGHUP);
  }
  struct sigaction after {};
  sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler) << "the outermost restores what was there";
}

TEST(SignalForwarderTest, AnInheritedIgnoredSignalStaysIgnoredForTheChildToo) {
  signal(SIGHUP, SIG_IGN);
  {
    SignalForwarder forwarder;
    kill(getpid(), SIGHUP);
    EXPECT_EQ(forwarder.received(), 0);
    SleepingChild child;  // restore_in_child: SIGHUP stays ignored there
    kill(child.pid(), SIGHUP);
    std::this_thread::sleep_for(50ms);
    kill(child.pid(), SIGTERM);
    EXPECT_EQ(child.death_signal(), SIGTERM) << "nohup's SIG_IGN was not inherited";
  }
  struct sigaction now {};
  sigaction(SIGHUP, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
  signal(SIGHUP, SIG_DFL);
}

// main's exit_on_late_stop_signals: once the verb's forwarder is gone, a stop
// signal (here during exit's own work) gives 128+N, not death by the signal;
// a signal strata was started with ignored stays ignored. In a forked child:
// the setting is process-wide.
TEST(SignalForwarderTest, AfterTheOutermostGoesAStopSignalExits128PlusN) {
  for (int sig : {SIGQUIT, SIGTERM, SIGINT}) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      signal(SIGHUP, SIG_IGN);
      SignalForwarder::exit_on_late_stop_signals();
      { SignalForwarder verb; }
      raise(SIGHUP);  // inherited as ignored: nothing happens
      raise(sig);
      _exit(0);  // not reached when the late handler works
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << sigabbrev_np(sig) << ": died of signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (WIFEXITED(status)) {
      EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << sigabbrev_np(sig);
    }
  }
}

bool is_dead(pid_t pid) {
  const std::string text = read_proc_text("/proc/" + std::to_string(pid) + "/stat").value_or("");
  const size_t paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] == 'Z' ||
         text[paren + 2] == 'X';
}

TEST(ProcessTest, TheChildDiesWhenItsParentIsKilled) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t parent = fork();
  if (parent == 0) {
    close(fds[0]);
    ProcessOptions po;
    po.on_child = [&](int pid) {
      if (pid <= 0) return;
      (void)!write(fds[1], &pid, sizeof pid);
      raise(SIGKILL);  // as `kill -9 strata` would: no handler, no clean-up
    };
    (void)run_process({"sleep", "30"}, po);
    _exit(0);
  }
  close(fds[1]);
  int child = 0;
  ASSERT_EQ(read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  close(fds[0]);
  int status = 0;
  waitpid(parent, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!is_dead(child) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  const bool dead = is_dead(child);
  if (!dead) kill(child, SIGKILL);
  EXPECT_TRUE(dead) << "sleep outlived the process that ran it";
}

}  // namespace
}  // namespace strata
