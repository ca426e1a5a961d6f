// A global operator new that counts calls while armed, for the writer's
// no-allocation contract. In its own file so the compiler cannot inline it
// into the tests and misreport the malloc/free pairing.
#include <atomic>
#include <cstdlib>
#include <new>

#include "spool_test_util.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int> g_count{0};
}  // namespace

void* operator new(size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_count.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}

namespace strata::format::testing {

int count_allocations(bool on) {
  if (on) g_count.store(0);
  g_counting.store(on);
  return g_count.load();
}

}  // namespace strata::format::testing
