// Fuzz tests of the four exports (issue 21: no input may crash strata):
// seeded random profiles and timelines (analysis/random_profile.h,
// random_timeline.h), deep, wide and with hostile names, must export without
// crashing and give well-formed output: JSON that a strict parser reads,
// folded lines of ';'-joined frames and a count, SVG whose tags balance and
// whose text is escaped valid UTF-8. Deterministic (fixed seeds) and bounded
// to a few seconds each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/random_profile.h"
#include "export/chrome_trace.h"
#include "export/flamegraph_svg.h"
#include "export/folded.h"
#include "export/speedscope.h"
#include "random_timeline.h"

namespace strata::exporter {
namespace {

using analysis::testing::random_profile;
using analysis::testing::Rng;

constexpr uint64_t kProfileSeeds = 60;
constexpr uint64_t kTimelineSeeds = 150;

analysis::CallTreeOptions tree_options(uint64_t seed) {
  analysis::CallTreeOptions o;
  o.thread_roots = seed % 2 == 1;
  o.weight = seed % 3 == 0 ? analysis::TreeWeight::kTime : analysis::TreeWeight::kSamples;
  if (seed % 5 == 0) o.tids = {1, 3};
  return o;
}

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

// Every line "frame;frame;... COUNT": a positive decimal count after the
// last space, frames non-empty, no control bytes. Returns the counts' sum.
uint64_t check_folded(const std::string& folded) {
  uint64_t sum = 0;
  size_t at = 0;
  while (at < folded.size()) {
    size_t nl = folded.find('\n', at);
    EXPECT_NE(nl, std::string::npos) << "unterminated last line";
    if (nl == std::string::npos) break;
    std::string_view line(folded.data() + at, nl - at);
    at = nl + 1;
    bool control = std::any_of(line.begin(), line.end(), [](char c) {
      auto u = static_cast<unsigned char>(c);
      return u < 0x20 || u == 0x7f;
    });
    EXPECT_FALSE(control) << "control byte in a folded line";
    size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos);
    if (space == std::string::npos) continue;
    std::string count(line.substr(space + 1));
    EXPECT_FALSE(count.empty());
    EXPECT_EQ(count.find_first_not_of("0123456789"), std::string::npos) << count;
    if (!count.empty() && count.size() < 20) sum += std::stoull(count);
    std::string_view stack = line.substr(0, space);
    size_t from = 0;
    while (true) {
      size_t semi = stack.find(';', from);
      if ((semi == std::string_view::npos ? stack.size() : semi) == from) {
        ADD_FAILURE() << "empty frame";
        break;
      }
      if (semi == std::string_view::npos) break;
      from = semi + 1;
    }
  }
  return sum;
}

// Enough of XML to catch escaping and nesting bugs: valid UTF-8, no control
// bytes, tags balanced and properly nested, '<' only starting a tag, '&'
// only starting one of the five entities, attribute values quoted.
::testing::AssertionResult check_svg(const std::string& svg) {
  if (!valid_utf8(svg)) return ::testing::AssertionFailure() << "not UTF-8";
  if (svg.rfind("<?xml ", 0) != 0) return ::testing::AssertionFailure() << "no XML declaration";
  std::vector<std::string> open;
  size_t i = svg.find("?>") + 2;
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << why << " at byte " << i;
  };
  auto entity_ok = [&](size_t at) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) {
      if (svg.compare(at, std::char_traits<char>::length(e), e) == 0) return true;
    }
    return false;
  };
  for (; i < svg.size(); ++i) {
    auto c = static_cast<unsigned char>(svg[i]);
    if (c < 0x20 && c != '\n') return fail("control byte");
    if (c == '&' && !entity_ok(i)) return fail("bare '&'");
    if (c == '>') return fail("stray '>'");
    if (c != '<') continue;
    size_t end = i + 1;
    char quote = 0;
    for (; end < svg.size(); ++end) {
      char d = svg[end];
      if (quote != 0) {
        if (d == quote) quote = 0;
        if (d == '<') return fail("'<' in an attribute");
        if (d == '&' && !entity_ok(end)) return fail("bare '&' in an attribute");
      } else if (d == '"') {
        quote = d;
      } else if (d == '>') {
        break;
      }
    }
    if (end == svg.size()) return fail("unterminated tag");
    std::string tag = svg.substr(i + 1, end - i - 1);
    bool closing = tag[0] == '/';
    bool empty = tag.back() == '/';
    std::string name =
        tag.substr(closing ? 1 : 0, tag.find_first_of(" /", closing ? 1 : 0) - (closing ? 1 : 0));
    if (closing) {
      if (open.empty() || open.back() != name) return fail("misnested </" + name + ">");
      open.pop_back();
    } else if (!empty) {
      open.push_back(name);
    }
    i = end;
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> left open";
  return ::testing::AssertionSuccess();
}

TEST(ExportFuzz, Folded) {
  for (uint64_t seed = 0; seed < kProfileSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Rng r(seed);
    analysis::Profile p = random_profile(r);
    analysis::CallTreeOptions o = tree_options(seed);
    uint64_t sum = check_folded(folded_stacks(p, o));
    if (analysis::is_sampled(p.mode) && o.weight == analysis::TreeWeight::kSamples) {
      // Every sample counts once, an empty stack as "[unknown]".
      uint64_t wanted = 0;
      for (const auto& s : p.samples) {
        if (o.tids.empty() || s.tid == 1 || s.tid == 3) ++wanted;
      }
      EXPECT_EQ(sum, wanted);
    }
  }
}

TEST(ExportFuzz, FlameGraphSvg) {
  for (uint64_t seed = 0; seed < kProfileSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Rng r(seed);
    analysis::Profile p = random_profile(r);
    FlameGraphOptions o;
    o.tree = tree_options(seed);
    o.title = analysis::testing::random_name(r);
    o.min_width_px = static_cast<double>(seed % 4) * 0.7;
    o.width = 200 + static_cast<double>(r.below(2000));
    std::string svg = flamegraph_svg(p, o);
    EXPECT_TRUE(check_svg(svg));
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  }
}

TEST(ExportFuzz, Speedscope) {
  for (uint64_t seed = 0; seed < kProfileSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Rng r(seed);
    analysis::Profile p = random_profile(r);
    SpeedscopeOptions o;
    o.name = analysis::testing::random_name(r);
    nlohmann::json doc;
    // parse() is strict: it rejects invalid UTF-8 and raw control bytes.
    ASSERT_NO_THROW(doc = nlohmann::json::parse(speedscope_json(p, o)));
    size_t frames = doc["shared"]["frames"].size();
    for (const auto& prof : doc["profiles"]) {
      if (prof["type"] == "sampled") {
        EXPECT_EQ(prof["samples"].size(), prof["weights"].size());
        for (const auto& stack : prof["samples"]) {
          for (const auto& f : stack) EXPECT_LT(f.get<size_t>(), frames);
        }
        continue;
      }
      // Evented: properly nested O/C pairs, in time order.
      std::vector<size_t> open;
      int64_t last = std::numeric_limits<int64_t>::min();
      for (const auto& e : prof["events"]) {
        size_t f = e["frame"].get<size_t>();
        EXPECT_LT(f, frames);
        EXPECT_GE(e["at"].get<int64_t>(), last);
        last = e["at"].get<int64_t>();
        if (e["type"] == "O") {
          open.push_back(f);
        } else {
          ASSERT_FALSE(open.empty());
          EXPECT_EQ(open.back(), f);
          open.pop_back();
        }
      }
      EXPECT_TRUE(open.empty());
    }
  }
}

TEST(ExportFuzz, ChromeTrace) {
  for (uint64_t seed = 0; seed < kTimelineSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Rng r(seed);
    GpuTimeline t = testing::random_timeline(r);
    ChromeTraceOptions o{analysis::testing::random_name(r), analysis::testing::random_name(r)};
    ChromeTrace out = chrome_trace(t, o);
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(out.json));
    ASSERT_TRUE(doc["traceEvents"].is_array());
    size_t slices = 0;
    for (const auto& e : doc["traceEvents"]) {
      ASSERT_TRUE(e.contains("ph"));
      if (e["ph"] == "X") {
        ++slices;
        EXPECT_GE(e["dur"].get<double>(), 0);
      }
    }
    EXPECT_EQ(slices, out.stats.slices);
  }
}

}  // namespace
}  // namespace strata::exporter
