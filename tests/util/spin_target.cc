// A CPU-bound target for the samplers' live tests (tests/sampler builds it as
// spin_helper, tests/sampler_inprocess as sigprof_target). Spins for a given
// amount of its own CPU time (CLOCK_THREAD_CPUTIME_ID, so that a loaded
// machine lowers the wall rate but not the sample count or weight), in the
// main thread or in N threads named worker-N started after main, optionally
// in a forked child too.
//
//   spin_target [--threads N] [--ms M] [--kill-self] [--fork] [--forever]
//
// --kill-self raises SIGKILL after spinning; --fork: a forked child (no exec)
// spins --ms as well, then exits; the parent waits for it before spinning
// itself. --forever spins until killed (capped at 20 s so that a broken test
// cannot leave it running).
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

volatile uint64_t g_sink;

// A few real frames (noinline, frame pointers where built with them) for the
// callchain tests.
__attribute__((noinline)) uint64_t leaf(uint64_t x) {
  for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}
__attribute__((noinline)) uint64_t middle(uint64_t x) {
  return leaf(x) ^ leaf(x + 1);
}
__attribute__((noinline)) void spin(int64_t cpu_ns) {
  const int64_t start = thread_cpu_ns();
  uint64_t x = 1;
  // CLOCK_THREAD_CPUTIME_ID is a real syscall (no vDSO): check it rarely so
  // that the spin is user time, which is all the sampler sees.
  while (thread_cpu_ns() - start < cpu_ns) {
    for (int i = 0; i < 100; ++i) x = middle(x);
  }
  g_sink = x;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  int64_t ms = 300;
  bool kill_self = false;
  bool fork_child = false;
  bool forever = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--ms") && i + 1 < argc) {
      ms = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--kill-self")) {
      kill_self = true;
    } else if (!std::strcmp(argv[i], "--fork")) {
      fork_child = true;
    } else if (!std::strcmp(argv[i], "--forever")) {
      forever = true;
    } else {
      return 2;
    }
  }
  const int64_t ns = (forever ? 20'000 : ms) * 1'000'000;
  if (fork_child) {
    pid_t pid = fork();
    if (pid == 0) {
      spin(ns);
      exit(0);  // exit, not _exit: the child's spool is closed by its destructor
    }
    int status = 0;
    waitpid(pid, &status, 0);
  }
  if (threads <= 0) {
    spin(ns);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([ns, t] {
        pthread_setname_np(pthread_self(), ("worker-" + std::to_string(t)).c_str());
        spin(ns);
      });
    }
    for (auto& t : pool) t.join();
  }
  if (kill_self) raise(SIGKILL);
  return 0;
}
