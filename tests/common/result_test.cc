#include "common/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace strata {
namespace {

Result<int> parse_positive(int x) {
  if (x <= 0) return make_error("not positive: " + std::to_string(x));
  return x;
}

Status check_even(int x) {
  if (x % 2 != 0) return make_error("odd: " + std::to_string(x));
  return Ok{};
}

Result<int> doubled_if_even(int x) {
  STRATA_ASSIGN_OR_RETURN(int v, parse_positive(x));
  STRATA_TRY(check_even(v));
  return v * 2;
}

Status assign_into_existing(int x, int& out) {
  STRATA_ASSIGN_OR_RETURN(out, parse_positive(x));
  return Ok{};
}

Result<std::unique_ptr<int>> boxed(int x) {
  if (x < 0) return make_error("negative");
  return std::make_unique<int>(x);
}

Result<int> unboxed(int x) {
  // Move-only values come out of the macro by move.
  STRATA_ASSIGN_OR_RETURN(auto box, boxed(x));
  STRATA_ASSIGN_OR_RETURN(auto again, boxed(*box + 1));  // two on one function
  return *again;
}

TEST(ResultMacros, ValuesFlowThrough) {
  auto r = doubled_if_even(4);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 8);
}

TEST(ResultMacros, AssignOrReturnStopsAtTheFirstError) {
  auto r = doubled_if_even(-3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "not positive: -3");
}

TEST(ResultMacros, TryStopsAtAFailedStatus) {
  auto r = doubled_if_even(3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "odd: 3");
}

TEST(ResultMacros, AssignsToAnExistingVariable) {
  int out = 0;
  EXPECT_TRUE(assign_into_existing(5, out).ok());
  EXPECT_EQ(out, 5);
  out = 7;
  EXPECT_FALSE(assign_into_existing(0, out).ok());
  EXPECT_EQ(out, 7);  // untouched on error
}

TEST(ResultMacros, MoveOnlyValues) {
  auto r = unboxed(41);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_FALSE(unboxed(-1).ok());
}

}  // namespace
}  // namespace strata
