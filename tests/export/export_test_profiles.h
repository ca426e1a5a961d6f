// Hand-built profiles shared by the export tests.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "analysis/cpu_profile.h"

namespace strata::exporter::testing {

inline analysis::FrameId frame(analysis::Profile& p, const std::string& name,
                               const std::string& file = "", int line = 0) {
  analysis::Frame f;
  f.function = name;
  f.file = file;
  f.line = line;
  return p.frames.intern(f);
}

// `count` samples of one stack given leaf first, weight 1 ms.
inline void add_samples(analysis::Profile& p, int count,
                        std::initializer_list<std::string> leaf_first, int32_t tid = 1) {
  std::vector<analysis::FrameId> stack;
  for (const auto& f : leaf_first) stack.push_back(frame(p, f));
  for (int i = 0; i < count; ++i) {
    p.samples.push_back({tid, 1, static_cast<int64_t>(p.samples.size()) * 1000000, 1000000, stack});
  }
}

// a: 5 samples inclusive (1 self); a;b: 4 (1 self); a;b;c: 3.
inline analysis::Profile abc_profile() {
  analysis::Profile p;
  p.rate_hz = 1000;
  add_samples(p, 3, {"c", "b", "a"});
  add_samples(p, 1, {"b", "a"});
  add_samples(p, 1, {"a"});
  return p;
}

}  // namespace strata::exporter::testing
