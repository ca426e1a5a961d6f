#include "analysis/stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::analysis {
namespace {

TEST(Summarize, EmptyHasNoSummary) {
  EXPECT_FALSE(summarize(std::vector<double>{}).has_value());
}

TEST(Summarize, OddCountMedianIsTheMiddle) {
  std::vector<double> v = {5, 1, 3};
  auto s = summarize(v);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->median, 3);
  EXPECT_EQ(s->min, 1);
  EXPECT_EQ(s->max, 5);
  EXPECT_EQ(s->count, 3u);
}

TEST(Summarize, EvenCountMedianIsMeanOfTheTwoMiddle) {
  // nsys's convention: cudaLaunchKernel's Med (ns) 25530.5 in the seed.
  std::vector<double> v = {4, 1, 10, 2};
  EXPECT_EQ(summarize(v)->median, 3);
}

TEST(Summarize, StdDevIsTheSampleOne) {
  std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};  // population sd 2, sample sd 2.138...
  EXPECT_NEAR(summarize(v)->stddev, 2.13809, 1e-5);
  std::vector<double> one = {7};
  EXPECT_EQ(summarize(one)->stddev, 0);
}

}  // namespace
}  // namespace strata::analysis
