// Seeded random CPU profiles for the fuzz tests of the exports and of
// --filter: deep, wide and full of hostile names (control bytes, NUL,
// invalid UTF-8, markup, separators, very long), plus out-of-range frame
// ids, unbalanced calls and times running backwards.
// Deterministic: the same seed gives the same input on every run (the
// generator and its ranges are our own, not <random>'s distributions, whose
// results differ between standard libraries).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"

namespace strata::analysis::testing {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9e3779b97f4a7c15ULL + 1) {}

  // splitmix64.
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n) { return next() % n; }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }

 private:
  uint64_t state_;
};

// A name a target could report, often a hostile one. `long_ok`: may be
// thousands of bytes (off for frames of deep stacks, which would multiply
// the output's size by the depth).
inline std::string random_name(Rng& r, bool long_ok = true) {
  static const std::vector<std::string> kHostile = {
      "",
      ";",
      "a;b;c",
      "line\nbreak\r\n",
      std::string("nul\0inside", 10),
      "\x01\x02\x1f\x7f",
      "\xff\xfe invalid",
      "cut \xc3",
      "\xed\xa0\x80 surrogate",
      "\xef\xbf\xbe nonchar",
      "</script><script>alert(1)</script>",
      "<svg onload=x>&amp;&#0;\"'",
      "]]><!-- -->",
      "\"quoted\\\"\\",
      "\\u0000",
      "ünïcödé 名前 🔥",
      "std::vector<int, std::allocator<int> >::push_back(int const&)",
      "operator<<(std::ostream&, Foo const&)",
      "(anonymous namespace)::f [clone .cold]",
      "{built-in method}",
      " 42",
      "tab\there",
  };
  switch (r.below(6)) {
    case 0:
    case 1:
      return "f" + std::to_string(r.below(40));
    case 2:
      return kHostile[r.below(kHostile.size())];
    case 3: {
      // Random bytes, any value.
      std::string s(r.below(24), '\0');
      for (char& c : s) c = static_cast<char>(r.below(256));
      return s;
    }
    case 4: {
      // Long: up to 20,000 bytes of a repeated hostile piece.
      std::string piece = kHostile[r.below(kHostile.size())] + "x";
      std::string s;
      size_t n = !long_ok ? r.below(40) : r.chance(10) ? 20'000 : r.below(600);
      while (s.size() < n) s += piece;
      return s;
    }
    default:
      return kHostile[r.below(kHostile.size())] + "f" + std::to_string(r.below(10));
  }
}

// Frames [0, kShortFrames) have short names: deep stacks draw from them.
inline constexpr size_t kShortFrames = 12;

inline FrameId random_frame(Rng& r, Profile& p, bool deep = false) {
  if (deep) return static_cast<FrameId>(r.below(kShortFrames));
  // Mostly a small set of functions, so stacks share prefixes and recurse.
  if (p.frames.size() > kShortFrames + 8 && r.chance(70)) {
    return static_cast<FrameId>(r.below(p.frames.size()));
  }
  bool long_ok = p.frames.size() >= kShortFrames;
  Frame f;
  f.function = random_name(r, long_ok);
  f.file = r.chance(50) ? "" : random_name(r, long_ok);
  f.line = static_cast<int>(r.below(3)) == 0 ? 0 : static_cast<int>(r.below(100'000));
  f.module = r.chance(50) ? "/usr/lib/libx.so" : random_name(r, long_ok);
  f.module_offset = r.below(1 << 20);
  f.inlined = r.chance(10);
  return p.frames.intern(f);
}

// A stack depth: mostly shallow, sometimes thousands of frames deep.
inline size_t random_depth(Rng& r) {
  if (r.chance(5)) return 1000 + r.below(4000);
  if (r.chance(10)) return 0;
  return 1 + r.below(30);
}

inline FrameId maybe_out_of_range(Rng& r, Profile& p, bool deep) {
  // A frame id past the table: the store guards against it, the exports must too.
  if (r.chance(2)) return static_cast<FrameId>(p.frames.size() + 100 + r.below(5));
  return random_frame(r, p, deep);
}

inline void add_short_frames(Rng& r, Profile& p) {
  while (p.frames.size() < kShortFrames) random_frame(r, p);
}

inline void random_threads(Rng& r, Profile& p) {
  for (int32_t tid = 1; tid <= 4; ++tid) {
    if (r.chance(60)) p.threads.push_back({tid, 1, random_name(r)});
  }
  if (r.chance(50)) p.processes.push_back({1, random_name(r)});
}

inline Profile random_sampled_profile(Rng& r) {
  Profile p;
  p.mode = r.chance(50) ? ProfileMode::kPerfEvent : ProfileMode::kInProcess;
  p.rate_hz = r.chance(10) ? 0 : 997;
  add_short_frames(r, p);
  random_threads(r, p);
  size_t samples = r.below(60);
  for (size_t i = 0; i < samples; ++i) {
    Sample s;
    s.tid = static_cast<int32_t>(1 + r.below(5));
    s.pid = 1;
    s.time_ns = static_cast<int64_t>(r.below(1'000'000'000));
    s.weight_ns = r.chance(20) ? 0 : static_cast<int64_t>(r.below(2'000'000));
    size_t depth = random_depth(r);
    bool deep = depth > 100;
    if (r.chance(30)) {
      // Recursion: one function many times, as a runaway recursive call leaves.
      s.stack.assign(depth, random_frame(r, p, deep));
    } else {
      for (size_t d = 0; d < depth; ++d) s.stack.push_back(maybe_out_of_range(r, p, deep));
    }
    p.samples.push_back(std::move(s));
  }
  if (!p.samples.empty() && r.chance(10)) {
    // Past the depth where a recursive walk of the call tree overflowed.
    std::vector<FrameId>& stack = p.samples[r.below(p.samples.size())].stack;
    stack.clear();
    for (size_t d = 0; d < 25'000; ++d) stack.push_back(random_frame(r, p, true));
  }
  return p;
}

inline Profile random_instrumented_profile(Rng& r) {
  Profile p;
  p.mode = ProfileMode::kInstrumented;
  add_short_frames(r, p);
  random_threads(r, p);
  size_t threads = 1 + r.below(3);
  for (size_t t = 0; t < threads; ++t) {
    ThreadCalls tc;
    tc.tid = static_cast<int32_t>(1 + t);
    tc.pid = 1;
    int64_t now = static_cast<int64_t>(r.below(1000));
    std::vector<FrameId> open;
    // Big threads have thousands of events on short-named frames; half of
    // them mostly enter: a stack thousands of frames deep.
    bool big = r.chance(10);
    size_t events = big ? 6000 : r.below(200);
    bool deep = big && r.chance(50);
    for (size_t e = 0; e < events; ++e) {
      now += r.chance(3) ? -static_cast<int64_t>(r.below(50)) : static_cast<int64_t>(r.below(100));
      bool enter = open.empty() || (deep ? r.chance(95) : r.chance(55));
      if (enter) {
        FrameId f = maybe_out_of_range(r, p, big);
        open.push_back(f);
        tc.events.push_back({now, f, CallKind::kEnter});
      } else {
        // Mostly the matching exit; sometimes an outer one or a stray.
        FrameId f = open.back();
        if (r.chance(5)) f = open[r.below(open.size())];
        if (r.chance(3)) f = random_frame(r, p, big);
        open.pop_back();
        tc.events.push_back({now, f, CallKind::kExit});
      }
    }
    p.calls.push_back(std::move(tc));
  }
  return p;
}

inline Profile random_profile(Rng& r) {
  return r.chance(60) ? random_sampled_profile(r) : random_instrumented_profile(r);
}

}  // namespace strata::analysis::testing
