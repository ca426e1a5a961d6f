// Order statistics with the conventions strata's users know from nsys:
// the median of an even count is the mean of the two middle values, and the
// standard deviation is the sample one (n - 1). Pure functions, no I/O.
#pragma once

#include <optional>
#include <span>

namespace strata::analysis {

struct Summary {
  size_t count = 0;
  double min = 0;
  double median = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation; 0 for fewer than two values
};

// nullopt for an empty input.
std::optional<Summary> summarize(std::span<const double> values);

double median(std::span<const double> values);  // values must not be empty

}  // namespace strata::analysis
