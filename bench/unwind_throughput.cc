// Offline unwinding throughput: samples/s of Symbolizer::unwind on stacks
// ~10 frames deep that go through libc (qsort), captured in this process
// from -O2 code without frame pointers, plus the cost of symbolizing them
// (cached per address) and of the first sample of an address space (the
// Dwfl set-up). Prints medians of several runs.
//
//   unwind_throughput [samples_per_run] [runs]
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "symbolize/fp_unwind.h"
#include "symbolize/symbolizer.h"

namespace {

using strata::symbolize::DwarfReg;
using strata::symbolize::UserRegs;

struct Sample {
  UserRegs regs;
  std::vector<uint8_t> stack;
};

std::vector<Sample> g_samples;

__attribute__((noipa)) void record(const uint64_t* raw) {
  Sample s;
  for (DwarfReg reg : {strata::symbolize::kRip, strata::symbolize::kRsp, strata::symbolize::kRbp,
                       strata::symbolize::kRbx, strata::symbolize::kR12, strata::symbolize::kR13,
                       strata::symbolize::kR14, strata::symbolize::kR15}) {
    s.regs.set(reg, raw[reg]);
  }
  pthread_attr_t attr;
  void* lo = nullptr;
  size_t size = 0;
  pthread_getattr_np(pthread_self(), &attr);
  pthread_attr_getstack(&attr, &lo, &size);
  pthread_attr_destroy(&attr);
  uint64_t top = reinterpret_cast<uint64_t>(lo) + size;
  uint64_t len = std::min<uint64_t>(top - s.regs.sp(), 32768);  // a typical sample_stack_user
  s.stack.resize(len);
  std::memcpy(s.stack.data(), reinterpret_cast<const void*>(s.regs.sp()), len);
  g_samples.push_back(std::move(s));
}

int g_captures_left = 0;

__attribute__((noipa)) int compare(const void* a, const void* b) {
  if (g_captures_left > 0) {
    --g_captures_left;
    uint64_t raw[strata::symbolize::kNumDwarfRegs] = {};
    asm volatile(
        "lea 1f(%%rip), %%rax\n\tmov %%rax, 128(%0)\n\tmov %%rsp, 56(%0)\n\t"
        "mov %%rbp, 48(%0)\n\tmov %%rbx, 24(%0)\n\tmov %%r12, 96(%0)\n\t"
        "mov %%r13, 104(%0)\n\tmov %%r14, 112(%0)\n\tmov %%r15, 120(%0)\n\t1:\n\t"
        :
        : "r"(raw)
        : "rax", "memory");
    record(raw);
  }
  int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

__attribute__((noipa)) int descend(int depth) {
  if (depth > 0) {
    int r = descend(depth - 1);
    asm volatile("" ::: "memory");
    return r + 1;
  }
  int values[64];
  for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
  g_captures_left = 1;
  qsort(values, 64, sizeof(int), compare);
  return values[0];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int samples = argc > 1 ? std::atoi(argv[1]) : 20000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  // Eight distinct stacks, 8 to 15 frames (descend depth 3..10 + qsort's own).
  for (int depth = 3; depth <= 10; ++depth) descend(depth);
  auto space = strata::symbolize::read_proc_maps(0);
  if (!space.ok()) {
    std::fprintf(stderr, "strata: %s\n", space.error().message.c_str());
    return 1;
  }

  auto t0 = std::chrono::steady_clock::now();
  strata::symbolize::Symbolizer cold;
  auto first =
      cold.unwind(*space, g_samples[0].regs, {g_samples[0].regs.sp(), g_samples[0].stack}, 128);
  double cold_ms = seconds_since(t0) * 1e3;

  strata::symbolize::Symbolizer sym;
  size_t frames_total = 0;
  std::vector<double> unwind_rate, symbolize_rate, fp_rate;
  for (int run = 0; run < runs; ++run) {
    frames_total = 0;
    auto t = std::chrono::steady_clock::now();
    std::vector<std::vector<uint64_t>> stacks;
    stacks.reserve(samples);
    for (int i = 0; i < samples; ++i) {
      const Sample& s = g_samples[i % g_samples.size()];
      auto u = sym.unwind(*space, s.regs, {s.regs.sp(), s.stack}, 128);
      frames_total += u.pcs.size();
      stacks.push_back(std::move(u.pcs));
    }
    unwind_rate.push_back(samples / seconds_since(t));
    t = std::chrono::steady_clock::now();
    size_t names = 0;
    for (const auto& pcs : stacks) names += sym.symbolize_stack(*space, pcs).size();
    symbolize_rate.push_back(samples / seconds_since(t));
    t = std::chrono::steady_clock::now();
    size_t fp_frames = 0;
    for (int i = 0; i < samples; ++i) {
      const Sample& s = g_samples[i % g_samples.size()];
      fp_frames += strata::symbolize::unwind_fp(s.regs, {s.regs.sp(), s.stack}, 128).size();
    }
    fp_rate.push_back(samples / seconds_since(t));
    if (names == 0 || fp_frames == 0) return 1;
  }
  std::printf("stacks: %zu distinct, %.1f frames on average (first: %zu frames, stop %s)\n",
              g_samples.size(), static_cast<double>(frames_total) / samples, first.pcs.size(),
              strata::symbolize::unwind_stop_name(first.stop));
  std::printf("first sample of an address space (Dwfl set-up): %.1f ms\n", cold_ms);
  std::printf("dwarf unwind:            %10.0f samples/s (median of %d runs of %d)\n",
              median(unwind_rate), runs, samples);
  std::printf("symbolize (cached):      %10.0f samples/s\n", median(symbolize_rate));
  std::printf(
      "frame-pointer walk:      %10.0f samples/s (ratio dwarf/fp %.3f; its frames are "
      "wrong on this -fomit-frame-pointer code)\n",
      median(fp_rate), median(unwind_rate) / median(fp_rate));
  return 0;
}
