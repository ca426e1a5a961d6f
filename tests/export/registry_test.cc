// export/registry.h: every name once, each runner writes the format it is
// named for, and the help and the "unknown --format" list come from the table.
#include "export/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "export_test_profiles.h"

namespace strata::exporter {
namespace {

TEST(ExportRegistry, NamesAreUniqueAndFindable) {
  std::set<std::string> seen;
  for (const auto& e : export_registry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name;
    EXPECT_EQ(find_export(e.name), &e) << e.name;
    EXPECT_NE(std::string(e.help), "") << e.name;
    // Exactly the runner of its input.
    EXPECT_EQ(e.from_profile != nullptr, e.input == ExportInput::kCpuProfile) << e.name;
    EXPECT_EQ(e.from_timeline != nullptr, e.input == ExportInput::kGpuTimeline) << e.name;
  }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(find_export("xml"), nullptr);
  EXPECT_EQ(find_export(""), nullptr);
  EXPECT_EQ(find_export("Chrome"), nullptr);
}

TEST(ExportRegistry, ListsAreTheCliText) {
  EXPECT_EQ(export_names(), "speedscope, folded, svg, pstats or chrome");
  EXPECT_EQ(format_flag_help(), "speedscope, folded, svg, pstats (CPU profile) or chrome");
}

TEST(ExportRegistry, RunnersWriteTheirFormat) {
  ExportContext context{"t.sqlite", "strata test"};
  auto profile = testing::abc_profile();
  auto speedscope = find_export("speedscope")->from_profile(profile, context);
  EXPECT_NE(speedscope.text.find("speedscope.app"), std::string::npos);
  EXPECT_NE(speedscope.text.find("\"name\":\"t.sqlite\""), std::string::npos);
  auto svg = find_export("svg")->from_profile(profile, context);
  EXPECT_NE(svg.text.find("strata cpu: t.sqlite"), std::string::npos);
  auto folded = find_export("folded")->from_profile(profile, context);
  EXPECT_EQ(folded.text.find('{'), std::string::npos);
  EXPECT_NE(folded.text.find(';'), std::string::npos);
  auto pstats = find_export("pstats")->from_profile(profile, context);
  ASSERT_FALSE(pstats.text.empty());
  EXPECT_EQ(pstats.text.front(), '{');  // marshal's dict; tests/export/pstats_roundtrip.py reads it
  EXPECT_EQ(pstats.text.back(), '0');

  GpuTimeline timeline;
  TimelineGpuOp op;  // a kernel without a launch call: one note
  op.start = 10;
  op.end = 5;  // and it ends before it starts: another
  op.name = "k";
  timeline.gpu_ops.push_back(op);
  auto chrome = find_export("chrome")->from_timeline(timeline, context);
  EXPECT_NE(chrome.text.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(chrome.text.find("strata test"), std::string::npos);
  ASSERT_EQ(chrome.notes.size(), 2u);
  EXPECT_EQ(chrome.notes[0], "1 kernels/copies have no launching API call (no arrow)");
  EXPECT_EQ(chrome.notes[1], "1 events end before they start (written with dur 0)");
}

}  // namespace
}  // namespace strata::exporter
