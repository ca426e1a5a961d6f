#include "analysis/welch_test.h"

#include <cmath>
#include <limits>

#include "analysis/stats.h"
#include "analysis/student_t.h"

namespace strata::analysis {

std::optional<WelchTest> welch_t_test(std::span<const double> a, std::span<const double> b,
                                      double confidence) {
  auto sa = summarize(a);
  auto sb = summarize(b);
  if (!sa || !sb || sa->count < 2 || sb->count < 2) return std::nullopt;
  const double na = static_cast<double>(sa->count);
  const double nb = static_cast<double>(sb->count);
  // Variance of each mean: the sample variance over n.
  const double va = sa->stddev * sa->stddev / na;
  const double vb = sb->stddev * sb->stddev / nb;
  WelchTest w;
  w.mean_a = sa->mean;
  w.mean_b = sb->mean;
  w.difference = sb->mean - sa->mean;
  w.standard_error = std::sqrt(va + vb);
  if (w.standard_error == 0) {
    w.df = na + nb - 2;
    const bool equal = w.difference == 0;
    w.t = equal ? 0 : std::copysign(std::numeric_limits<double>::infinity(), w.difference);
    w.p = equal ? 1 : 0;
    w.ci_low = w.ci_high = w.difference;
    return w;
  }
  w.df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
  w.t = w.difference / w.standard_error;
  w.p = student_t_two_sided_p(w.t, w.df);
  const double half = student_t_quantile(0.5 + confidence / 2, w.df) * w.standard_error;
  w.ci_low = w.difference - half;
  w.ci_high = w.difference + half;
  return w;
}

}  // namespace strata::analysis
