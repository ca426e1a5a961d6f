// Student's t distribution, for the significance test and confidence
// interval of `strata compare` (analysis/welch_test.h). The CDF goes through
// the regularized incomplete beta function (DLMF 8.17); quantiles invert the
// CDF by bisection, so the answer for a given input is the same on every run.
// Degrees of freedom need not be integers: Welch's test gives fractional
// ones. Pure functions, no I/O.
#pragma once

namespace strata::analysis {

// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and
// 0 <= x <= 1; accurate to about 1e-14 relative.
double regularized_incomplete_beta(double x, double a, double b);

// P(T <= t) for T ~ Student's t with `df` > 0 degrees of freedom.
double student_t_cdf(double t, double df);

// P(|T| >= |t|): the two-sided p-value of a t statistic.
double student_t_two_sided_p(double t, double df);

// The t with P(T <= t) = p, for 0 < p < 1 (e.g. 0.975 for a two-sided 95 %
// interval); within 1e-12 of the exact value.
double student_t_quantile(double p, double df);

}  // namespace strata::analysis
