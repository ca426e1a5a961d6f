#include "analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace strata::analysis {

double median(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

std::optional<Summary> summarize(std::span<const double> values) {
  if (values.empty()) return std::nullopt;
  Summary s;
  s.count = values.size();
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.min = *lo;
  s.max = *hi;
  s.median = median(values);
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.count);
  if (s.count > 1) {
    double sq = 0;
    for (double v : values) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(s.count - 1));
  }
  return s;
}

}  // namespace strata::analysis
