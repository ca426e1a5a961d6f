// A program whose threads mostly wait, the way library thread pools do
// (issue 20 item 7): OpenMP workers spinning at a parallel region's barrier
// while thread 0 works (run with OMP_WAIT_POLICY=active, GOMP's spin), a
// pool of std::thread workers waiting on a condition variable, and one
// thread yielding in a sched_yield loop. The work is `heavy`, the only
// function that should top the report's table.
#include <omp.h>
#include <sched.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {

volatile double sink;

__attribute__((noinline)) double heavy(int n) {
  double x = 0;
  for (int i = 0; i < n; ++i) x += static_cast<double>(i & 7) * 1e-9;
  return x;
}

std::mutex mutex;
std::condition_variable wake;
bool done = false;
std::atomic<bool> stop_yielding{false};

void pool_worker() {
  std::unique_lock<std::mutex> lock(mutex);
  wake.wait(lock, [] { return done; });
}

// Compiled without the loop's own work: the samples land in sched_yield.
__attribute__((noinline)) void yielder() {
  while (!stop_yielding.load(std::memory_order_relaxed)) sched_yield();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
  std::vector<std::thread> pool;
  for (int i = 0; i < 2; ++i) pool.emplace_back(pool_worker);
  std::thread yielding(yielder);
  for (int r = 0; r < rounds; ++r) {
#pragma omp parallel num_threads(2)
    {
      // Thread 1 has nothing to do: it waits at the region's closing barrier.
      if (omp_get_thread_num() == 0) sink = heavy(1000000);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  wake.notify_all();
  for (auto& t : pool) t.join();
  stop_yielding = true;
  yielding.join();
  std::printf("%g\n", sink);
  return 0;
}
