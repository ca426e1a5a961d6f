// Student's t distribution and Welch's test against published values: each
// expectation names where its number comes from.
#include "analysis/student_t.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "analysis/welch_test.h"

namespace strata::analysis {
namespace {

TEST(IncompleteBeta, ClosedForms) {
  // I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b (DLMF 8.17.1
  // with B(a, 1) = 1/a); I_{1/2}(a, a) = 1/2 by the symmetry DLMF 8.17.4.
  EXPECT_NEAR(regularized_incomplete_beta(0.3, 1, 1), 0.3, 1e-15);
  EXPECT_NEAR(regularized_incomplete_beta(0.7, 3, 1), 0.343, 1e-14);
  EXPECT_NEAR(regularized_incomplete_beta(0.2, 1, 4), 1 - std::pow(0.8, 4), 1e-14);
  EXPECT_NEAR(regularized_incomplete_beta(0.5, 7.5, 7.5), 0.5, 1e-14);
  EXPECT_EQ(regularized_incomplete_beta(0, 2, 3), 0);
  EXPECT_EQ(regularized_incomplete_beta(1, 2, 3), 1);
}

TEST(IncompleteBeta, IntegerParametersAreBinomialTails) {
  // DLMF 8.17.5: for integers, I_x(a, n - a + 1) = P(Binomial(n, x) >= a).
  // P(Bin(4, 0.4) >= 2) = 1 - 0.6^4 - 4 * 0.4 * 0.6^3 = 0.5248.
  EXPECT_NEAR(regularized_incomplete_beta(0.4, 2, 3), 0.5248, 1e-14);
  // P(Bin(20, 0.9) >= 15), summed exactly term by term: 0.988746865835...
  double tail = 0;
  for (int k = 15; k <= 20; ++k) {
    tail += std::exp(std::lgamma(21) - std::lgamma(k + 1) - std::lgamma(21 - k)) *
            std::pow(0.9, k) * std::pow(0.1, 20 - k);
  }
  EXPECT_NEAR(regularized_incomplete_beta(0.9, 15, 6), tail, 1e-13);
}

TEST(StudentT, CdfClosedForms) {
  // One degree of freedom is Cauchy: F(t) = 1/2 + atan(t) / pi; two:
  // F(t) = 1/2 + t / (2 sqrt(2 + t^2)) (e.g. Johnson, Kotz & Balakrishnan,
  // Continuous Univariate Distributions vol. 2, ch. 28).
  for (double t : {-30.0, -2.5, -0.3, 0.0, 0.7, 1.0, 4.0, 100.0}) {
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / std::numbers::pi, 1e-14) << t;
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-14) << t;
  }
  EXPECT_NEAR(student_t_two_sided_p(1.0, 1), 0.5, 1e-15);  // atan(1) = pi/4
  EXPECT_EQ(student_t_two_sided_p(INFINITY, 3), 0);
}

TEST(StudentT, QuantilesMatchThePublishedTable) {
  // NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2 "Critical
  // values of the Student's t distribution", three decimals.
  struct Row {
    double df, p, t;
  };
  const std::vector<Row> table = {
      {1, 0.975, 12.706},  {2, 0.975, 4.303},  {3, 0.975, 3.182},  {4, 0.975, 2.776},
      {5, 0.975, 2.571},   {10, 0.975, 2.228}, {20, 0.975, 2.086}, {30, 0.975, 2.042},
      {100, 0.975, 1.984}, {1, 0.95, 6.314},   {5, 0.95, 2.015},   {10, 0.95, 1.812},
      {10, 0.995, 3.169},  {30, 0.99, 2.457},
  };
  for (const auto& r : table) {
    EXPECT_NEAR(student_t_quantile(r.p, r.df), r.t, 0.0005) << "df " << r.df << " p " << r.p;
    EXPECT_NEAR(student_t_quantile(1 - r.p, r.df), -r.t, 0.0005) << "df " << r.df;
  }
  // Many degrees of freedom: the normal's 1.959964 (the table's infinity row, 1.960).
  EXPECT_NEAR(student_t_quantile(0.975, 1e7), 1.959964, 1e-5);
  EXPECT_EQ(student_t_quantile(0.5, 7), 0);
}

TEST(StudentT, QuantileInvertsTheCdf) {
  for (double df : {1.0, 2.5, 7.0, 17.776, 250.0}) {
    for (double p : {0.001, 0.025, 0.3, 0.9, 0.975, 0.9999}) {
      EXPECT_NEAR(student_t_cdf(student_t_quantile(p, df), df), p, 1e-12) << df << " " << p;
    }
  }
}

TEST(WelchTest, MatchesRsSleepExample) {
  // R's documentation of t.test, `t.test(extra ~ group, data = sleep)`
  // (Cushny & Peebles' data, R's datasets::sleep), prints:
  //   t = -1.8608, df = 17.776, p-value = 0.07939
  //   95 percent confidence interval: -3.3654832 0.2054832
  //   mean in group 1: 0.75, mean in group 2: 2.33
  // R subtracts group 2 from group 1; welch_t_test gives b - a.
  const std::vector<double> group1 = {0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
  const std::vector<double> group2 = {1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};
  auto w = welch_t_test(group2, group1);
  ASSERT_TRUE(w);
  EXPECT_NEAR(w->mean_a, 2.33, 1e-12);
  EXPECT_NEAR(w->mean_b, 0.75, 1e-12);
  EXPECT_NEAR(w->t, -1.8608, 5e-5);
  EXPECT_NEAR(w->df, 17.776, 5e-4);
  EXPECT_NEAR(w->p, 0.07939, 5e-6);
  EXPECT_NEAR(w->ci_low, -3.3654832, 5e-7);
  EXPECT_NEAR(w->ci_high, 0.2054832, 5e-7);
}

TEST(WelchTest, NeedsTwoValuesPerSide) {
  EXPECT_FALSE(welch_t_test(std::vector<double>{1.0}, std::vector<double>{1.0, 2.0}));
  EXPECT_FALSE(welch_t_test(std::vector<double>{1.0, 2.0}, std::vector<double>{}));
}

TEST(WelchTest, SidesThatDoNotVary) {
  auto same = welch_t_test(std::vector<double>{3, 3}, std::vector<double>{3, 3, 3});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->p, 1);
  EXPECT_EQ(same->ci_low, 0);
  EXPECT_EQ(same->ci_high, 0);
  auto apart = welch_t_test(std::vector<double>{3, 3}, std::vector<double>{5, 5});
  ASSERT_TRUE(apart);
  EXPECT_EQ(apart->p, 0);
  EXPECT_EQ(apart->ci_low, 2);
  EXPECT_EQ(apart->ci_high, 2);
}

}  // namespace
}  // namespace strata::analysis
