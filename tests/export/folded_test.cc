#include "export/folded.h"

#include <gtest/gtest.h>

#include "export_test_profiles.h"

namespace strata::exporter {
namespace {

using namespace testing;

TEST(Folded, RootFirstSortedWithCounts) {
  EXPECT_EQ(folded_stacks(abc_profile(), {}), "a 1\na;b 1\na;b;c 3\n");
}

TEST(Folded, WeightsInNanoseconds) {
  FoldedOptions o;
  o.weight = analysis::TreeWeight::kTime;
  EXPECT_EQ(folded_stacks(abc_profile(), o), "a 1000000\na;b 1000000\na;b;c 3000000\n");
}

TEST(Folded, SanitizesSeparatorsAndLineBreaks) {
  analysis::Profile p;
  add_samples(p, 2, {"leaf;with;semis", "multi\nline\r\tname", "main"});
  add_samples(p, 1, {"", "main"});
  EXPECT_EQ(folded_stacks(p, {}),
            "main;[unknown] 1\n"
            "main;multi line  name;leaf:with:semis 2\n");
  EXPECT_EQ(folded_name("a;b\nc\x01"), "a:b c ");
  EXPECT_EQ(folded_name(""), "[unknown]");
}

TEST(Folded, EqualNamesFromDifferentFilesMerge) {
  analysis::Profile p;
  analysis::FrameId s1 = frame(p, "init", "a.cc", 1);
  analysis::FrameId s2 = frame(p, "init", "b.cc", 1);
  p.samples.push_back({1, 1, 0, 1, {s1}});
  p.samples.push_back({1, 1, 0, 1, {s2}});
  EXPECT_EQ(folded_stacks(p, {}), "init 2\n");
}

TEST(Folded, ThreadRootsAndThreadFilter) {
  analysis::Profile p;
  p.threads = {{1, 1, "main"}};
  add_samples(p, 2, {"f", "main"}, 1);
  add_samples(p, 1, {"g"}, 2);
  FoldedOptions o;
  o.thread_roots = true;
  EXPECT_EQ(folded_stacks(p, o), "main (tid 1);main;f 2\ntid 2;g 1\n");
  o.tids = {2};
  EXPECT_EQ(folded_stacks(p, o), "tid 2;g 1\n");
}

TEST(Folded, InstrumentedCountsSelfNanoseconds) {
  analysis::Profile p;
  p.mode = analysis::ProfileMode::kInstrumented;
  analysis::FrameId m = frame(p, "main");
  analysis::FrameId f = frame(p, "f");
  p.calls.push_back({1,
                     1,
                     {{0, m, analysis::CallKind::kEnter},
                      {10, f, analysis::CallKind::kEnter},
                      {25, f, analysis::CallKind::kExit},
                      {40, m, analysis::CallKind::kExit}}});
  EXPECT_EQ(folded_stacks(p, {}), "main 25\nmain;f 15\n");
}

TEST(Folded, EmptyProfileIsEmpty) {
  EXPECT_EQ(folded_stacks(analysis::Profile{}, {}), "");
}

}  // namespace
}  // namespace strata::exporter
