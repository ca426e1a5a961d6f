// Stacks as deep as a runaway recursion leaves (issue 21): the exports walk
// the call tree without recursion, so depth costs memory, never the stack.
// Before, folded crashed (exit 139) at 100,000 frames and the SVG at 20,000.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "export/flamegraph_svg.h"
#include "export/folded.h"
#include "export/speedscope.h"
#include "export_test_profiles.h"

namespace strata::exporter {
namespace {

using namespace testing;

constexpr size_t kDeep = 100'000;

// One sample: main, then `depth` frames alternating a and b, leaf last.
analysis::Profile deep_profile(size_t depth) {
  analysis::Profile p;
  p.rate_hz = 1000;
  analysis::FrameId a = frame(p, "a");
  analysis::FrameId b = frame(p, "b");
  std::vector<analysis::FrameId> stack;
  for (size_t i = depth; i-- > 0;) stack.push_back(i % 2 ? b : a);
  stack.push_back(frame(p, "main"));
  p.samples.push_back({1, 1, 0, 1'000'000, stack});
  p.samples.push_back({1, 1, 0, 1'000'000, {frame(p, "main")}});
  return p;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(DeepStack, FoldedWritesTheWholeStack) {
  std::string expected = "main 1\nmain";
  for (size_t i = 0; i < kDeep; ++i) expected += i % 2 ? ";b" : ";a";
  expected += " 1\n";
  EXPECT_EQ(folded_stacks(deep_profile(kDeep), {}), expected);
}

TEST(DeepStack, FlameGraphDrawsEveryLevel) {
  std::string svg = flamegraph_svg(deep_profile(kDeep), {});
  // The root, main and every frame of the stack: one <g> each, all closed.
  EXPECT_EQ(count(svg, "<g>"), kDeep + 2);
  EXPECT_EQ(count(svg, "</g>"), kDeep + 2 + 1);  // + the frames group
  // Levels stack upwards: the height holds all of them.
  double height = 12 * 3 + (kDeep + 2) * 16 + 12 * 2;
  EXPECT_NE(svg.find(fmt::format("height=\"{:.0f}\"", height)), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(DeepStack, FlameGraphLevelsMatchTheDrawnDepth) {
  // Only the frames wide enough are drawn; the height counts only those
  // levels, as a narrow frame hides its callees.
  analysis::Profile p = deep_profile(20'000);
  for (int i = 0; i < 3000; ++i) p.samples.push_back({1, 1, 0, 1'000'000, {frame(p, "wide")}});
  FlameGraphOptions o;
  o.min_width_px = 0.5;  // one sample of 3002 over 1180 px is 0.39 px: hidden; main's two are not
  std::string svg = flamegraph_svg(p, o);
  EXPECT_EQ(count(svg, "<g>"), 3u);  // all, main, wide
  EXPECT_NE(svg.find(fmt::format("height=\"{:.0f}\"", 12 * 3 + 2 * 16 + 12 * 2.0)),
            std::string::npos);
}

TEST(DeepStack, SpeedscopeKeepsTheWholeStack) {
  auto doc = nlohmann::json::parse(speedscope_json(deep_profile(kDeep), {}));
  ASSERT_EQ(doc["profiles"].size(), 1u);
  const auto& samples = doc["profiles"][0]["samples"];
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].size(), kDeep + 1);
}

TEST(DeepStack, InstrumentedDeepNestingExports) {
  analysis::Profile p;
  p.mode = analysis::ProfileMode::kInstrumented;
  analysis::FrameId f = frame(p, "f");
  analysis::ThreadCalls tc{1, 1, {}};
  // All enter at 0 and exit at 1: only the innermost call has self time.
  for (size_t i = 0; i < kDeep; ++i) tc.events.push_back({0, f, analysis::CallKind::kEnter});
  for (size_t i = 0; i < kDeep; ++i) tc.events.push_back({1, f, analysis::CallKind::kExit});
  p.calls.push_back(tc);
  std::string expected = "f";
  for (size_t i = 1; i < kDeep; ++i) expected += ";f";
  EXPECT_EQ(folded_stacks(p, {}), expected + " 1\n");
  std::string svg = flamegraph_svg(p, {});
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  auto doc = nlohmann::json::parse(speedscope_json(p, {}));
  EXPECT_EQ(doc["profiles"][0]["events"].size(), 2 * kDeep);
}

}  // namespace
}  // namespace strata::exporter
