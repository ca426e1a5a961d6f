#include "chain.h"

#include <pthread.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace strata::symbolize::testing {
namespace {

Captured g_capture;
uint64_t g_chain_c_pc = 0;

// Stores rip (of the label right after), rsp, rbp, rbx and r12-r15 into
// raw[DWARF number]. At the label, every register still holds what it held at
// the capture, so the CFI of that pc describes these values.
#define STRATA_TEST_CAPTURE(raw) \
  asm volatile(                  \
      "lea 1f(%%rip), %%rax\n\t" \
      "mov %%rax, 128(%0)\n\t"   \
      "mov %%rsp, 56(%0)\n\t"    \
      "mov %%rbp, 48(%0)\n\t"    \
      "mov %%rbx, 24(%0)\n\t"    \
      "mov %%r12, 96(%0)\n\t"    \
      "mov %%r13, 104(%0)\n\t"   \
      "mov %%r14, 112(%0)\n\t"   \
      "mov %%r15, 120(%0)\n\t"   \
      "1:\n\t"                   \
      :                          \
      : "r"(raw)                 \
      : "rax", "memory")

// Raw stack bytes include the poisoned redzones of returned frames, which
// ASan's memcpy would report: a sanitized build copies uninstrumented.
__attribute__((no_sanitize_address)) void copy_stack_bytes(uint8_t* out, uint64_t from, size_t n) {
#if defined(__SANITIZE_ADDRESS__)
  const volatile uint8_t* in = reinterpret_cast<const volatile uint8_t*>(from);
  for (size_t i = 0; i < n; ++i) out[i] = in[i];
#else
  std::memcpy(out, reinterpret_cast<const void*>(from), n);
#endif
}

// Copies the stack from the captured sp to the top of this thread's stack
// (at most 64 KiB, like perf's sample_stack_user cap).
__attribute__((noipa)) void finish_capture(const uint64_t* raw) {
  Captured c;
  for (DwarfReg reg : {kRip, kRsp, kRbp, kRbx, kR12, kR13, kR14, kR15}) c.regs.set(reg, raw[reg]);
  pthread_attr_t attr;
  void* stack_lo = nullptr;
  size_t stack_size = 0;
  pthread_getattr_np(pthread_self(), &attr);
  pthread_attr_getstack(&attr, &stack_lo, &stack_size);
  pthread_attr_destroy(&attr);
  uint64_t top = reinterpret_cast<uint64_t>(stack_lo) + stack_size;
  uint64_t sp = c.regs.sp();
  uint64_t len = top > sp ? std::min<uint64_t>(top - sp, 65536) : 0;
  c.stack.resize(len);
  copy_stack_bytes(c.stack.data(), sp, len);
  g_capture = std::move(c);
}

__attribute__((noipa)) int chain_c(int x) {
  uint64_t raw[kNumDwarfRegs] = {};
  STRATA_TEST_CAPTURE(raw);  // MARK:c_capture
  finish_capture(raw);
  g_chain_c_pc = raw[kRip];
  return x * 3 + static_cast<int>(raw[kRsp] & 1);
}

inline __attribute__((always_inline)) int chain_b_helper(int x) {
  int r = chain_c(x + 1);  // MARK:helper_calls_c
  asm volatile("" ::: "memory");
  return r ^ 5;
}

__attribute__((noipa)) int chain_b(int x) {
  int r = chain_b_helper(x * 2);  // MARK:b_calls_helper
  asm volatile("" ::: "memory");
  return r + 7;
}

int g_captured_in_compare = 0;

__attribute__((noipa)) int compare_and_capture(const void* a, const void* b) {
  if (!g_captured_in_compare) {
    g_captured_in_compare = 1;
    uint64_t raw[kNumDwarfRegs] = {};
    STRATA_TEST_CAPTURE(raw);  // MARK:compare_capture
    finish_capture(raw);
  }
  int x = *static_cast<const int*>(a);
  int y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noipa)) uint64_t trampoline_callee(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t raw[kNumDwarfRegs] = {};
  STRATA_TEST_CAPTURE(raw);  // MARK:callee_capture
  finish_capture(raw);
  return a + b + c;
}

}  // namespace

const Captured& last_capture() {
  return g_capture;
}
uint64_t chain_c_capture_pc() {
  return g_chain_c_pc;
}

__attribute__((noipa)) int chain_a(int x) {
  int r = chain_b(x - 1);  // MARK:a_calls_b
  asm volatile("" ::: "memory");
  return r * 11;
}

__attribute__((noipa)) int sort_and_capture() {
  int values[] = {5, 3, 9, 1, 7, 2, 8, 6, 4, 0};
  g_captured_in_compare = 0;
  qsort(values, sizeof(values) / sizeof(values[0]), sizeof(int),
        compare_and_capture);  // MARK:qsort
  asm volatile("" ::: "memory");
  return values[0];
}

__attribute__((noipa)) uint64_t call_through_trampoline(const uint8_t* code, size_t size) {
  void* mem = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 0;
  std::memcpy(mem, code, size);
  if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0) {
    munmap(mem, 4096);
    return 0;
  }
  // The trampoline's signature, as in CPython: (ts, frame, throwflag,
  // evaluator), the evaluator arriving in rcx.
  using Trampoline =
      uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t(*)(uint64_t, uint64_t, uint64_t));
  uint64_t r = reinterpret_cast<Trampoline>(mem)(1, 2, 3, &trampoline_callee);  // MARK:call_tramp
  asm volatile("" ::: "memory");
  if (r != 6) std::abort();
  // Left mapped: the test symbolizes and unwinds through it afterwards.
  return reinterpret_cast<uint64_t>(mem);
}

}  // namespace strata::symbolize::testing
