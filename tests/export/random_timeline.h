// Seeded random GPU timelines for the fuzz test of the Chrome trace export:
// hostile names (analysis/random_profile.h), spans that end before they
// start, unmatched correlation ids and, sometimes, thousands of nested NVTX
// ranges on one thread. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/random_profile.h"
#include "export/chrome_trace.h"

namespace strata::exporter::testing {

using analysis::testing::random_name;
using analysis::testing::Rng;

inline int64_t random_gid(Rng& r) {
  int64_t pid = static_cast<int64_t>(1 + r.below(3));
  int64_t tid = static_cast<int64_t>(1 + r.below(4));
  return (pid << 24) | tid;
}

inline std::pair<int64_t, int64_t> random_span(Rng& r, int64_t around) {
  int64_t start = around + static_cast<int64_t>(r.below(10'000));
  int64_t end = start + static_cast<int64_t>(r.below(5'000));
  if (r.chance(3)) end = start - static_cast<int64_t>(r.below(100));  // backwards
  return {start, end};
}

inline GpuTimeline random_timeline(Rng& r) {
  GpuTimeline t;
  int64_t now = static_cast<int64_t>(r.below(1'000'000));
  size_t calls = r.below(80);
  for (size_t i = 0; i < calls; ++i) {
    TimelineApiCall c;
    std::tie(c.start, c.end) = random_span(r, now);
    now += static_cast<int64_t>(r.below(3000));
    c.global_tid = random_gid(r);
    c.correlation_id = static_cast<int64_t>(r.below(40));
    c.driver = r.chance(30);
    c.name = random_name(r);
    t.api_calls.push_back(std::move(c));
  }
  size_t ops = r.below(80);
  for (size_t i = 0; i < ops; ++i) {
    TimelineGpuOp op;
    op.kind = static_cast<GpuOpKind>(r.below(3));
    std::tie(op.start, op.end) = random_span(r, static_cast<int64_t>(r.below(1'200'000)));
    op.global_pid = random_gid(r) & ~int64_t{0xffffff};
    op.device_id = static_cast<int64_t>(r.below(2));
    op.stream_id = static_cast<int64_t>(r.below(5));
    op.correlation_id = static_cast<int64_t>(r.below(50));
    op.name = random_name(r);
    op.grid = {static_cast<int64_t>(r.below(100000)), 1, static_cast<int64_t>(r.below(3))};
    op.block = {static_cast<int64_t>(r.below(1025)), 1, 1};
    op.registers_per_thread = static_cast<int64_t>(r.below(256));
    op.bytes = static_cast<int64_t>(r.below(1 << 30));
    op.copy_kind = random_name(r);
    t.gpu_ops.push_back(std::move(op));
  }
  // NVTX: sometimes a deep nest of push/pop ranges on one thread.
  size_t ranges = r.chance(10) ? 3000 : r.below(40);
  bool nested = r.chance(30);
  for (size_t i = 0; i < ranges; ++i) {
    TimelineNvtxRange n;
    if (nested) {
      n.start = now + static_cast<int64_t>(i);
      n.end = now + 2 * static_cast<int64_t>(ranges) - static_cast<int64_t>(i);
      n.global_tid = (int64_t{1} << 24) | 1;
    } else {
      std::tie(n.start, n.end) = random_span(r, now);
      n.global_tid = random_gid(r);
    }
    n.push_pop = r.chance(80);
    n.unterminated = r.chance(5);
    n.name = random_name(r);
    n.domain = r.chance(70) ? "" : random_name(r);
    t.nvtx_ranges.push_back(std::move(n));
  }
  for (int64_t pid = 1; pid <= 3; ++pid) {
    if (r.chance(60)) t.process_names[pid << 24] = random_name(r);
  }
  for (int i = 0; i < 4; ++i) {
    if (r.chance(50)) t.thread_names[random_gid(r)] = random_name(r);
  }
  return t;
}

}  // namespace strata::exporter::testing
