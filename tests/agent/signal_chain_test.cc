// SignalChain: the hook runs, the previous handler still runs, and the
// process still dies of its signal (exit status unchanged). Each case runs in
// a death-test child, since the handlers are process-wide.
#include "agent/signal_chain.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>

// In a sanitized build ASan installs a SIGSEGV handler of its own before
// main, which these tests' chain would call as "the program's previous
// handler": it reports and exits instead of dying by the signal the tests
// expect. The tests are about strata's chain, so ASan keeps out of SEGV here
// (ASAN_OPTIONS from the environment is read after this and can override).
extern "C" const char* __asan_default_options() {
  return "handle_segv=0";
}

namespace {

using strata::agent::SignalChain;

void say(const char* text) {
  ssize_t n = write(STDERR_FILENO, text, strlen(text));
  (void)n;
}

void hook(int sig, bool terminating) {
  char line[64];
  snprintf(line, sizeof(line), "hook sig=%d terminating=%d\n", sig, terminating ? 1 : 0);
  say(line);
}

void install_all() {
  const int signals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGTERM, SIGINT};
  if (!SignalChain::install(signals, 5, hook)) say("install failed\n");
}

class SignalChainTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SignalChainTest, SigtermWithDefaultActionStillKills) {
  EXPECT_EXIT(
      {
        install_all();
        raise(SIGTERM);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "hook sig=15 terminating=1");
}

// A real fault: UBSan would report the null store before it faults.
__attribute__((no_sanitize("undefined"))) void store_through_null() {
  volatile int* null_pointer = nullptr;
  *null_pointer = 1;
}

TEST_F(SignalChainTest, RealSegfaultStillKillsWithSigsegv) {
  EXPECT_EXIT(
      {
        install_all();
        store_through_null();
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGSEGV), "hook sig=11 terminating=1");
}

TEST_F(SignalChainTest, AbortStillKillsWithSigabrt) {
  EXPECT_EXIT(
      {
        install_all();
        std::abort();
      },
      ::testing::KilledBySignal(SIGABRT), "hook sig=6 terminating=1");
}

void program_sigint(int) {
  say("program handler ran\n");
}

TEST_F(SignalChainTest, ProgramHandlerForSigintRunsAndTheProcessGoesOn) {
  EXPECT_EXIT(
      {
        signal(SIGINT, program_sigint);
        install_all();
        raise(SIGINT);
        raise(SIGINT);  // ours stays installed: the hook sees both
        say("survived\n");
        std::_Exit(3);
      },
      ::testing::ExitedWithCode(3),
      "hook sig=2 terminating=0\nprogram handler ran\nhook sig=2 terminating=0\nprogram handler "
      "ran\nsurvived");
}

void program_crash_handler(int sig, siginfo_t*, void*) {
  char line[64];
  snprintf(line, sizeof(line), "program crash handler sig=%d\n", sig);
  say(line);
  std::_Exit(7);
}

TEST_F(SignalChainTest, ProgramCrashHandlerRunsAfterTheHook) {
  EXPECT_EXIT(
      {
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_sigaction = program_crash_handler;
        action.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &action, nullptr);
        install_all();
        store_through_null();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(7), "hook sig=11 terminating=1\nprogram crash handler sig=11");
}

TEST_F(SignalChainTest, KillSentSegvIsReRaised) {
  EXPECT_EXIT(
      {
        install_all();
        kill(getpid(), SIGSEGV);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGSEGV), "hook sig=11 terminating=1");
}

TEST_F(SignalChainTest, IgnoredSigtermStaysIgnored) {
  EXPECT_EXIT(
      {
        signal(SIGTERM, SIG_IGN);
        install_all();
        raise(SIGTERM);
        say("still here\n");
        std::_Exit(4);
      },
      ::testing::ExitedWithCode(4), "^still here\n$");
}

TEST_F(SignalChainTest, UninstallRestoresThePreviousActions) {
  EXPECT_EXIT(
      {
        signal(SIGINT, program_sigint);
        install_all();
        SignalChain::uninstall();
        raise(SIGINT);
        std::_Exit(5);
      },
      ::testing::ExitedWithCode(5), "^program handler ran\n$");
}

}  // namespace
