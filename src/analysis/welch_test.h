// Welch's unequal-variances t-test (B. L. Welch, Biometrika 34, 1947) and its
// confidence interval for the difference of two means, as R's
// t.test(var.equal = FALSE) and scipy's ttest_ind(equal_var=False) compute
// them: the Welch–Satterthwaite degrees of freedom, a two-sided p-value.
// `strata compare` runs it on log times (analysis/compare_wall.h). Pure.
#pragma once

#include <optional>
#include <span>

namespace strata::analysis {

struct WelchTest {
  double mean_a = 0;
  double mean_b = 0;
  double difference = 0;      // mean_b - mean_a
  double standard_error = 0;  // sqrt(var_a / n_a + var_b / n_b), sample variances
  double df = 0;              // Welch–Satterthwaite; n_a + n_b - 2 when neither side varies
  double t = 0;               // difference / standard_error
  double p = 1;               // two-sided
  double ci_low = 0;          // of the difference, at the confidence asked
  double ci_high = 0;
};

// nullopt when a side has fewer than two values (no variance to estimate).
// When neither side varies (standard error 0) there is no noise to test
// against: p is 1 for equal means and 0 otherwise, and the interval is the
// difference itself. `confidence` is in (0, 1), e.g. 0.95.
std::optional<WelchTest> welch_t_test(std::span<const double> a, std::span<const double> b,
                                      double confidence = 0.95);

}  // namespace strata::analysis
