// The instrumented test program of tests/instrument: known call counts for
// every mode, so the tests can compare strata's ncalls with exact numbers.
// Built with -finstrument-functions and linked with strata::instrument.
//
//   instrument_probe calls          fact(3) once, is_even(4) once, leaf() 5 times
//   instrument_probe many N         leaf() N times (N > 32K fills the buffer)
//   instrument_probe threads T N    T threads named probe-worker, each leaf() N times
//   instrument_probe abort N        leaf() N times, then abort() two calls deep
//   instrument_probe fork N         the child calls leaf() N times, the parent 2N
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace probe {

// noipa: no clones, no inlining, no constant propagation, so each call is a
// real call of a function whose name is exactly this one.
__attribute__((noipa)) int leaf(int x) {
  return x * 3 + 1;
}

__attribute__((noipa)) int fact(int n) {
  return n <= 1 ? 1 : n * fact(n - 1);
}

__attribute__((noipa)) bool is_odd(int n);
__attribute__((noipa)) bool is_even(int n) {
  return n == 0 ? true : is_odd(n - 1);
}
__attribute__((noipa)) bool is_odd(int n) {
  return n == 0 ? false : is_even(n - 1);
}

__attribute__((noipa)) long run_leaf(long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += leaf(static_cast<int>(i));
  return sum;
}

void* worker(void* arg) {
  pthread_setname_np(pthread_self(), "probe-worker");
  long n = *static_cast<long*>(arg);
  run_leaf(n);
  return nullptr;
}

__attribute__((noipa)) void crash_inner() {
  std::abort();
}
__attribute__((noipa)) void crash_outer() {
  crash_inner();
}

}  // namespace probe

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: instrument_probe calls|many N|threads T N|abort N|fork N\n");
    return 2;
  }
  const char* mode = argv[1];
  long n = argc > 2 ? std::atol(argv[argc - 1]) : 0;
  if (std::strcmp(mode, "calls") == 0) {
    int sum = probe::fact(3) + (probe::is_even(4) ? 1 : 0);
    for (int i = 0; i < 5; ++i) sum += probe::leaf(i);
    std::printf("calls %d\n", sum);
  } else if (std::strcmp(mode, "many") == 0) {
    std::printf("many %ld\n", probe::run_leaf(n));
  } else if (std::strcmp(mode, "threads") == 0 && argc > 3) {
    std::vector<pthread_t> threads(static_cast<size_t>(std::atol(argv[2])));
    for (auto& t : threads) pthread_create(&t, nullptr, probe::worker, &n);
    for (auto& t : threads) pthread_join(t, nullptr);
    std::printf("threads %zu\n", threads.size());
  } else if (std::strcmp(mode, "abort") == 0) {
    probe::run_leaf(n);
    std::fflush(stdout);
    probe::crash_outer();
  } else if (std::strcmp(mode, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      probe::run_leaf(n);
      std::exit(0);
    }
    probe::run_leaf(2 * n);
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("fork %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else {
    std::fprintf(stderr, "instrument_probe: unknown mode '%s'\n", mode);
    return 2;
  }
  return 0;
}
