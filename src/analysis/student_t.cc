#include "analysis/student_t.h"

#include <cmath>
#include <limits>

namespace strata::analysis {
namespace {

// 1 + d1/(1 + d2/(1 + ...)), the continued fraction of I_x(a, b) (DLMF
// 8.17.22), by the modified Lentz method. It converges fast for
// x < (a + 1) / (a + b + 2); the caller swaps to I_{1-x}(b, a) otherwise.
double beta_fraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300;
  constexpr double kTolerance = 1e-16;
  constexpr int kMaxTerms = 10000;
  double f = 1.0;
  double c = 1.0;
  double d = 0.0;
  auto step = [&](double coefficient) {
    d = 1.0 + coefficient * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + coefficient / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = c * d;
    f *= delta;
    return delta;
  };
  for (int m = 0; m < kMaxTerms; ++m) {
    // d_{2m+1}, then d_{2m+2}.
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
    const double first = step(odd);
    const double k = m + 1.0;
    const double even = k * (b - k) * x / ((a + 2.0 * k - 1.0) * (a + 2.0 * k));
    const double second = step(even);
    if (std::fabs(first - 1.0) < kTolerance && std::fabs(second - 1.0) < kTolerance) break;
  }
  return f;
}

// I_x(a, b) with y = 1 - x given separately, so that an x near 1 computed
// as a ratio (the t distribution's df / (df + t^2)) keeps its precision.
double incomplete_beta(double x, double y, double a, double b) {
  if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::quiet_NaN();
  if (x <= 0.0) return 0.0;
  if (y <= 0.0) return 1.0;
  const double log_front =
      a * std::log(x) + b * std::log(y) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  if (x < (a + 1.0) / (a + b + 2.0)) return std::exp(log_front) / a / beta_fraction(x, a, b);
  return 1.0 - std::exp(log_front) / b / beta_fraction(y, b, a);
}

}  // namespace

double regularized_incomplete_beta(double x, double a, double b) {
  return incomplete_beta(x, 1.0 - x, a, b);
}

double student_t_two_sided_p(double t, double df) {
  if (std::isnan(t) || std::isnan(df)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return 0.0;
  // P(|T| >= |t|) = I_{df/(df+t^2)}(df/2, 1/2) (DLMF 8.17 with the t density).
  const double t2 = t * t;
  const double sum = df + t2;
  return incomplete_beta(df / sum, t2 / sum, df / 2.0, 0.5);
}

double student_t_cdf(double t, double df) {
  const double tails = student_t_two_sided_p(t, df);
  return t > 0 ? 1.0 - tails / 2.0 : tails / 2.0;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0.0 && p < 1.0) || !(df > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.5) return 0.0;
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  // The t > 0 whose two-sided tail is 2 (1 - p): the tail falls as t grows,
  // so bracket it by doubling, then halve the bracket to machine precision.
  const double tails = 2.0 * (1.0 - p);
  double lo = 0.0;
  double hi = 1.0;
  while (student_t_two_sided_p(hi, df) > tails && hi < 1e300) {
    lo = hi;
    hi *= 2.0;
  }
  for (int i = 0; i < 2000 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = lo + (hi - lo) / 2.0;
    if (student_t_two_sided_p(mid, df) > tails) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo + (hi - lo) / 2.0;
}

}  // namespace strata::analysis
