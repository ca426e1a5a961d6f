// Which matching launches get profiled: STRATA_KERNEL_SKIP of them are let
// through first, then STRATA_KERNEL_COUNT are profiled (ncu's
// --launch-skip / --launch-count over the kernels that --kernel-name
// matched; docs/kernels-interface.md).
//
// Threading: not thread-safe; the kernel profiler calls it under its lock.
// Allocation: none.
#pragma once

#include <cstdint>

namespace strata::agent::kernels {

class LaunchWindow {
 public:
  static constexpr uint64_t kUnlimited = ~0ull;

  LaunchWindow(uint64_t skip, uint64_t count) : skip_(skip), count_(count) {}

  // Called once per matching launch, in launch order: whether to profile it.
  bool take() {
    uint64_t ordinal = matched_++;
    if (ordinal < skip_) return false;
    if (count_ != kUnlimited && ordinal - skip_ >= count_) return false;
    ++profiled_;
    return true;
  }
  // No later matching launch will be profiled: the profiler can be switched off.
  bool exhausted() const { return count_ != kUnlimited && profiled_ >= count_; }
  uint64_t matched() const { return matched_; }
  uint64_t profiled() const { return profiled_; }

 private:
  uint64_t skip_;
  uint64_t count_;
  uint64_t matched_ = 0;
  uint64_t profiled_ = 0;
};

}  // namespace strata::agent::kernels
