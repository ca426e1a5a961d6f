#include "analysis/recorded_bench.h"

#include <algorithm>
#include <string>
#include <vector>

namespace strata::analysis {

std::vector<std::string> recorded_metric_keys(std::span<const store::BenchRun> runs) {
  std::vector<std::string> keys;
  for (const auto& r : runs) {
    for (const auto& [key, value] : r.metrics) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  return keys;
}

RecordedBench summarize_recorded_bench(std::span<const store::BenchRun> runs) {
  RecordedBench out;
  for (const auto& r : runs) {
    if (r.label == "A") (r.warmup ? out.warmups : out.measured) += 1;
  }
  out.summary = summarize_bench(runs, recorded_metric_keys(runs));
  return out;
}

}  // namespace strata::analysis
