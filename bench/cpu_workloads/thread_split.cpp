// thread_split: threads with a known CPU-work ratio for bench/cpu_thread_split.sh.
// Thread i (1-based, named "split<i>") runs i units of spin_work; the main thread
// only waits. Each worker reads its own CLOCK_THREAD_CPUTIME_ID when done, and
// the program prints one line per worker, so the expected split comes from the
// CPU time each thread really used, not just from the nominal 1:2:...:N.
//
//   cpu_thread_split [--threads N] [--unit ITERS]   (defaults 4, 20000000)
//   worker=1 name=split1 tid=1234 units=1 cpu_ns=51234567
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "work_unit.h"

namespace {
struct Result {
  long tid = 0;
  int64_t cpu_ns = 0;
  uint64_t checksum = 0;
};

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

int main(int argc, char** argv) {
  int nthreads = 4;
  uint64_t unit = 20'000'000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      nthreads = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--unit") == 0 && i + 1 < argc) {
      unit = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: cpu_thread_split [--threads N] [--unit ITERS]\n");
      return 2;
    }
  }
  if (nthreads < 1 || nthreads > 16) {
    std::fprintf(stderr, "cpu_thread_split: --threads must be 1..16\n");
    return 2;
  }
  std::vector<Result> results(nthreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) {
    threads.emplace_back([&results, t, unit] {
      std::string name = "split" + std::to_string(t + 1);
      pthread_setname_np(pthread_self(), name.c_str());
      Result& r = results[t];
      r.tid = static_cast<long>(syscall(SYS_gettid));
      int64_t c0 = thread_cpu_ns();
      for (int u = 0; u <= t; ++u) r.checksum ^= cpu_bench::spin_work(unit, 0x9E3779B97F4A7C15ull + u);
      r.cpu_ns = thread_cpu_ns() - c0;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < nthreads; ++t) {
    std::printf("worker=%d name=split%d tid=%ld units=%d cpu_ns=%lld checksum=%llu\n", t + 1, t + 1,
                results[t].tid, t + 1, static_cast<long long>(results[t].cpu_ns),
                static_cast<unsigned long long>(results[t].checksum));
  }
  return 0;
}
