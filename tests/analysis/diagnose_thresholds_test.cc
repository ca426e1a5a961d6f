// strata diagnose --threshold: the name table parses, refuses and reads back.
#include "analysis/diagnose_thresholds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace strata::analysis {
namespace {

// The rules' table, in its order: what an unknown name's error lists.
std::string known_threshold_names() {
  std::string out;
  for (const auto& n : threshold_names()) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

TEST(DiagnoseThresholds, EveryFieldHasANameThatSetsIt) {
  for (const auto& n : threshold_names()) {
    DiagnosisThresholds t;
    // A value inside the field's range, and unlike its default.
    const double value = n.lowest + (std::min(n.highest, n.lowest + 1e6) - n.lowest) / 4;
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", value);
    ASSERT_TRUE(set_threshold(t, std::string(n.name) + "=" + text).ok()) << n.name;
    EXPECT_EQ(t.*(n.field), value) << n.name;
  }
  DiagnosisThresholds t;
  ASSERT_TRUE(set_threshold(t, "min_share=0.3").ok());
  EXPECT_EQ(t.min_share, 0.3);
  EXPECT_EQ(t.syncs_per_launch, DiagnosisThresholds{}.syncs_per_launch) << "others untouched";
}

TEST(DiagnoseThresholds, BadAssignmentsAreNamed) {
  DiagnosisThresholds t;
  auto unknown = set_threshold(t, "min_shares=0.3");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "'min_shares=0.3': unknown threshold (known: " + known_threshold_names() + ")");
  auto no_eq = set_threshold(t, "min_share");
  ASSERT_FALSE(no_eq.ok());
  EXPECT_NE(no_eq.error().message.find("use NAME=VALUE"), std::string::npos);
  for (const char* bad : {"min_share=", "min_share=abc", "min_share=0.1x", "min_share=nan",
                          "min_share=inf"}) {
    auto r = set_threshold(t, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("not a number"), std::string::npos) << r.error().message;
  }
  auto range = set_threshold(t, "min_share=1.5");
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.error().message, "'min_share=1.5': min_share must be between 0 and 1");
  EXPECT_EQ(t.min_share, DiagnosisThresholds{}.min_share) << "a refused value changes nothing";
}

TEST(DiagnoseThresholds, StoredTextReadsBackExactly) {
  DiagnosisThresholds t;
  t.min_share = 0.1 + 0.2;  // not representable in few digits
  DiagnosisThresholds back;
  for (const auto& n : threshold_names()) {
    ASSERT_TRUE(set_threshold(back, n.name, threshold_text(t, n)).ok());
  }
  EXPECT_EQ(back.min_share, t.min_share);
}

}  // namespace
}  // namespace strata::analysis
