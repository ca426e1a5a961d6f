#include "export/speedscope.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "export_test_profiles.h"

namespace strata::exporter {
namespace {

using namespace testing;
using Json = nlohmann::json;

std::string frame_name(const Json& doc, const Json& index) {
  return doc["shared"]["frames"][index.get<size_t>()]["name"];
}

// Every event's frame in range, times non-decreasing, each C closing the
// innermost open frame, nothing left open.
void expect_properly_nested(const Json& profile, size_t frames) {
  std::vector<size_t> open;
  double last = profile["startValue"];
  for (const auto& e : profile["events"]) {
    size_t f = e["frame"];
    ASSERT_LT(f, frames);
    ASSERT_GE(e["at"].get<double>(), last);
    last = e["at"];
    if (e["type"] == "O") {
      open.push_back(f);
    } else {
      ASSERT_EQ(e["type"], "C");
      ASSERT_FALSE(open.empty());
      ASSERT_EQ(open.back(), f);
      open.pop_back();
    }
  }
  EXPECT_TRUE(open.empty());
  EXPECT_LE(last, profile["endValue"].get<double>());
}

TEST(Speedscope, SampledProfilePerThreadRootFirst) {
  analysis::Profile p = abc_profile();
  p.threads = {{1, 1, "main"}, {2, 1, "worker"}};
  add_samples(p, 7, {"w"}, 2);
  Json doc = Json::parse(speedscope_json(p, {"run", "strata 0.1.0"}));
  EXPECT_EQ(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
  EXPECT_EQ(doc["exporter"], "strata 0.1.0");
  EXPECT_EQ(doc["name"], "run");
  ASSERT_EQ(doc["profiles"].size(), 2u);
  EXPECT_EQ(doc["activeProfileIndex"], 1);  // the worker has the most weight
  size_t frames = doc["shared"]["frames"].size();
  EXPECT_EQ(frames, 4u);

  const Json& main = doc["profiles"][0];
  EXPECT_EQ(main["type"], "sampled");
  EXPECT_EQ(main["name"], "main (tid 1)");
  EXPECT_EQ(main["unit"], "nanoseconds");
  ASSERT_EQ(main["samples"].size(), 5u);
  ASSERT_EQ(main["weights"].size(), 5u);
  double sum = 0;
  for (const auto& w : main["weights"]) sum += w.get<double>();
  EXPECT_EQ(main["endValue"].get<double>() - main["startValue"].get<double>(), sum);
  for (const auto& s : main["samples"]) {
    for (const auto& i : s) EXPECT_LT(i.get<size_t>(), frames);
  }
  const Json& first = main["samples"][0];
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(frame_name(doc, first[0]), "a");  // root first
  EXPECT_EQ(frame_name(doc, first[2]), "c");
  EXPECT_EQ(doc["profiles"][1]["name"], "worker (tid 2)");
}

TEST(Speedscope, FramesCarryFileAndLineWhenKnown) {
  analysis::Profile p;
  analysis::FrameId f = frame(p, "f", "src/f.cc", 12);
  analysis::FrameId g = frame(p, "g");
  p.samples.push_back({1, 1, 0, 10, {f, g}});
  Json doc = Json::parse(speedscope_json(p, {}));
  EXPECT_EQ(doc["shared"]["frames"][0], (Json{{"name", "f"}, {"file", "src/f.cc"}, {"line", 12}}));
  EXPECT_EQ(doc["shared"]["frames"][1], (Json{{"name", "g"}}));
}

TEST(Speedscope, EventedProfileIsBalancedAndNestedEvenAfterACrash) {
  analysis::Profile p;
  p.mode = analysis::ProfileMode::kInstrumented;
  analysis::FrameId m = frame(p, "main");
  analysis::FrameId f = frame(p, "f");
  analysis::FrameId g = frame(p, "g");
  using analysis::CallKind;
  p.calls.push_back({1,
                     1,
                     {{1000, m, CallKind::kEnter},
                      {1010, f, CallKind::kEnter},
                      {1020, f, CallKind::kEnter},
                      {1030, f, CallKind::kExit},
                      {1040, g, CallKind::kEnter}}});  // crashed inside g
  p.calls.push_back({2,
                     1,
                     {{1500, g, CallKind::kExit},  // began before tracing
                      {1500, m, CallKind::kEnter},
                      {1600, m, CallKind::kExit}}});
  Json doc = Json::parse(speedscope_json(p, {}));
  ASSERT_EQ(doc["profiles"].size(), 2u);
  size_t frames = doc["shared"]["frames"].size();
  for (const auto& prof : doc["profiles"]) {
    EXPECT_EQ(prof["type"], "evented");
    expect_properly_nested(prof, frames);
  }
  EXPECT_EQ(doc["profiles"][0]["events"].size(), 8u);  // 5 recorded, 3 closed at the end
  EXPECT_EQ(doc["profiles"][0]["startValue"], 0);      // relative to the first event
  EXPECT_EQ(doc["profiles"][0]["endValue"], 40);
  EXPECT_EQ(doc["profiles"][1]["startValue"], 500);
}

TEST(Speedscope, InvalidUtf8NamesStillGiveValidJson) {
  analysis::Profile p;
  analysis::FrameId f = frame(p, std::string("bad\xff\xfe name\x01"));
  p.samples.push_back({1, 1, 0, 10, {f}});
  EXPECT_NO_THROW(Json::parse(speedscope_json(p, {})));
}

TEST(Speedscope, EmptyProfileHasNoProfiles) {
  Json doc = Json::parse(speedscope_json(analysis::Profile{}, {}));
  EXPECT_EQ(doc["profiles"].size(), 0u);
  EXPECT_EQ(doc["activeProfileIndex"], 0);
}

}  // namespace
}  // namespace strata::exporter
