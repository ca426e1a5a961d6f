// threads4: a 4-thread CPU-bound workload for bench/cpu_overhead.sh. Each thread
// runs the same fixed amount of work (spin_work); the program prints its own
// elapsed time around the threads (start to last join), so a profiler's
// post-processing after the run is not counted in it.
//
//   cpu_threads4 [--iters N]     (default 60000000 iterations per thread)
//   threads=4 iters=60000000 elapsed_ms=512.3 checksum=...
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "work_unit.h"

int main(int argc, char** argv) {
  uint64_t iters = 60'000'000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: cpu_threads4 [--iters N]\n");
      return 2;
    }
  }
  constexpr int kThreads = 4;
  std::vector<uint64_t> out(kThreads);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&out, t, iters] { out[t] = cpu_bench::spin_work(iters, 0x9E3779B97F4A7C15ull + t); });
  }
  for (auto& th : threads) th.join();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  uint64_t sum = 0;
  for (uint64_t v : out) sum ^= v;
  std::printf("threads=%d iters=%llu elapsed_ms=%.3f checksum=%llu\n", kThreads,
              static_cast<unsigned long long>(iters), ms, static_cast<unsigned long long>(sum));
  return 0;
}
