#include "analysis/recorded_bench.h"

#include <algorithm>
#include <string>
#include <vector>

namespace strata::analysis {

RecordedBench summarize_recorded_bench(std::span<const store::BenchRun> runs) {
  RecordedBench out;
  std::vector<std::string> keys;
  for (const auto& r : runs) {
    for (const auto& [key, value] : r.metrics) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    if (r.label == "A") (r.warmup ? out.warmups : out.measured) += 1;
  }
  out.summary = summarize_bench(runs, keys);
  return out;
}

}  // namespace strata::analysis
