// Per-call overhead of strata::instrument (docs/instrument.md): a
// call-heavy loop built with -finstrument-functions, timed against the same
// loop of a function exempted from instrumentation, in child processes run
// bare (library linked, STRATA_INSTRUMENT_DIR unset) and under strata
// (STRATA_INSTRUMENT_DIR set), interleaved; prints medians of ns per call
// (enter + exit) and the ratio. Goal: <= 50 ns per call under strata.
// Loops are timed on the thread's CPU clock, which counts the kernel's work
// for the spool writes and page faults but not time spent descheduled: the
// figures hold on a loaded machine.
//
//   instrument_overhead [CALLS [RUNS]]    default 2000000 calls, 7 runs
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

__attribute__((noipa, no_instrument_function)) int leaf_plain(int x) {
  return x * 3 + 1;
}
// The same function, instrumented: the difference per call is the hooks' cost.
__attribute__((noipa)) int leaf_instrumented(int x) {
  return x * 3 + 1;
}

__attribute__((no_instrument_function)) double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <int (*F)(int)>
__attribute__((no_instrument_function)) double ns_per_call(long calls) {
  double start = now_ns();
  int sum = 0;
  for (long i = 0; i < calls; ++i) sum += F(static_cast<int>(i));
  double elapsed = now_ns() - start;
  asm volatile("" : : "r"(sum));
  return elapsed / static_cast<double>(calls);
}

// The measured process: prints "plain instrumented" ns per call.
__attribute__((no_instrument_function)) int child(long calls) {
  ns_per_call<leaf_plain>(calls / 10);  // warm up caches and the clock
  double plain = ns_per_call<leaf_plain>(calls);
  double instrumented = ns_per_call<leaf_instrumented>(calls);
  std::printf("%.3f %.3f\n", plain, instrumented);
  return 0;
}

struct Pair {
  double plain = 0;
  double instrumented = 0;
};

__attribute__((no_instrument_function)) bool run_child(const char* self, long calls,
                                                       const char* dir, Pair* out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t pid = fork();
  if (pid == 0) {
    if (dir) {
      setenv("STRATA_INSTRUMENT_DIR", dir, 1);
    } else {
      unsetenv("STRATA_INSTRUMENT_DIR");
    }
    dup2(fds[1], 1);
    close(fds[0]);
    std::string n = std::to_string(calls);
    execl(self, self, "--child", n.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char buf[128] = {};
  ssize_t got = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
         std::sscanf(buf, "%lf %lf", &out->plain, &out->instrumented) == 2;
}

__attribute__((no_instrument_function)) double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

__attribute__((no_instrument_function)) int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return child(std::atol(argv[2]));
  long calls = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 7;
  if (calls <= 0 || runs <= 0) {
    std::fprintf(stderr, "usage: instrument_overhead [CALLS [RUNS]]\n");
    return 2;
  }
  std::string pattern = std::filesystem::temp_directory_path().string() + "/strata-ibench-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("instrument_overhead: mkdtemp");
    return 1;
  }
  std::vector<double> bare, strata, bare_base, strata_base;
  for (int r = 0; r < runs; ++r) {
    Pair b, s;
    if (!run_child(argv[0], calls, nullptr, &b) ||
        !run_child(argv[0], calls, pattern.c_str(), &s)) {
      std::fprintf(stderr, "instrument_overhead: a child run failed\n");
      return 1;
    }
    bare.push_back(b.instrumented - b.plain);
    strata.push_back(s.instrumented - s.plain);
    bare_base.push_back(b.plain);
    strata_base.push_back(s.plain);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(pattern, ec)) {
      std::filesystem::remove(e.path(), ec);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(pattern, ec);
  double bare_ns = median(bare), strata_ns = median(strata);
  double base_ns = median(bare_base);
  std::printf("instrument_overhead: %ld calls x %d runs (medians; enter + exit per call)\n", calls,
              runs);
  std::printf("  uninstrumented call      %7.2f ns\n", base_ns);
  std::printf("  bare (env unset)         %+7.2f ns/call over uninstrumented\n", bare_ns);
  std::printf("  under strata             %+7.2f ns/call over uninstrumented (goal <= 50)\n",
              strata_ns);
  std::printf("  ratio strata/bare call   %7.2f\n",
              (base_ns + strata_ns) / std::max(base_ns + bare_ns, 1e-9));
  return 0;
}
