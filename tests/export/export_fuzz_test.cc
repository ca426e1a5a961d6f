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

#include "analysis/cpp_names.h"
#include "analysis/cpu_pstats.h"
#include "analysis/random_profile.h"
#include "export/chrome_trace.h"
#include "export/flamegraph_svg.h"
#include "export/folded.h"
#include "export/pstats_file.h"
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
    // The SVG's one script is a CDATA section (flamegraph_svg_script.h, a
    // constant): skipped whole; it holds no name from the profile.
    if (svg.compare(i, 9, "<![CDATA[") == 0) {
      size_t close = svg.find("]]>", i + 9);
      if (close == std::string::npos) return fail("unterminated CDATA");
      i = close + 2;
      continue;
    }
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

// A reader of exactly the marshal subset pstats_file writes: it walks the
// whole stats dict and counts its entries, failing on anything else.
class MarshalWalk {
 public:
  explicit MarshalWalk(const std::string& bytes) : b_(bytes) {}
  // The number of functions in the stats dict, or -1 when malformed.
  long stats_entries() {
    long n = 0;
    if (!take('{')) return -1;
    while (pos_ < b_.size() && b_[pos_] != '0') {
      if (!key() || !take('(') || u32() != 5) return -1;
      for (int i = 0; i < 2; ++i) {
        if (!integer()) return -1;
      }
      for (int i = 0; i < 2; ++i) {
        if (!real()) return -1;
      }
      if (!take('{')) return -1;
      while (pos_ < b_.size() && b_[pos_] != '0') {
        if (!key() || !take('(') || u32() != 4 || !integer() || !integer() || !real() || !real()) {
          return -1;
        }
      }
      if (!take('0')) return -1;
      ++n;
    }
    return take('0') && pos_ == b_.size() ? n : -1;
  }

 private:
  bool take(char c) {
    if (pos_ >= b_.size() || b_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  int64_t u32() {
    if (pos_ + 4 > b_.size()) return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(static_cast<uint8_t>(b_[pos_ + i])) << (8 * i);
    pos_ += 4;
    return v;
  }
  bool integer() {
    if (take('i')) return u32() >= 0;
    if (!take('l')) return false;
    int64_t digits = u32();
    if (digits < 0 || pos_ + 2 * static_cast<size_t>(digits) > b_.size()) return false;
    pos_ += 2 * static_cast<size_t>(digits);
    return true;
  }
  bool real() {
    if (!take('g') || pos_ + 8 > b_.size()) return false;
    pos_ += 8;
    return true;
  }
  bool text() {
    if (!take('u')) return false;
    int64_t n = u32();
    if (n < 0 || pos_ + static_cast<size_t>(n) > b_.size()) return false;
    valid_utf8_ &= is_utf8(std::string_view(b_).substr(pos_, static_cast<size_t>(n)));
    pos_ += static_cast<size_t>(n);
    return true;
  }
  bool key() { return take('(') && u32() == 3 && text() && integer() && text(); }
  // Well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
  static bool is_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      const size_t len = c < 0x80                ? 1
                         : c >= 0xc2 && c < 0xe0 ? 2
                         : c >= 0xe0 && c < 0xf0 ? 3
                         : c >= 0xf0 && c < 0xf5 ? 4
                                                 : 0;
      if (len == 0 || i + len > s.size()) return false;
      uint32_t cp = len == 1 ? c : c & (0xff >> (len + 1));
      for (size_t k = 1; k < len; ++k) {
        const auto d = static_cast<unsigned char>(s[i + k]);
        if ((d & 0xc0) != 0x80) return false;
        cp = (cp << 6) | (d & 0x3f);
      }
      const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
      if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
      i += len;
    }
    return true;
  }

 public:
  bool valid_utf8_ = true;

 private:
  const std::string& b_;
  size_t pos_ = 0;
};

// Hostile names (random_name: control bytes, invalid UTF-8, '<' and ',')
// through the pstats file: one well-formed entry per function, valid UTF-8
// strings (what CPython's marshal requires of its 'u' strings).
TEST(ExportFuzz, PstatsFile) {
  for (uint64_t seed = 0; seed < kProfileSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Rng r(seed);
    analysis::Profile p = random_profile(r);
    std::string bytes = pstats_file(p);
    MarshalWalk walk(bytes);
    EXPECT_EQ(walk.stats_entries(),
              static_cast<long>(analysis::cpu_function_table(p, {})->rows.size()));
    EXPECT_TRUE(walk.valid_utf8_);
  }
}

// The name shortener on hostile names: no crash, and the profile keeps its
// samples and call events, each frame id within the new table.
TEST(ExportFuzz, ShortNames) {
  for (uint64_t seed = 0; seed < kProfileSeeds; ++seed) {
    SCOPED_TRACE(seed);
    Rng r(seed);
    analysis::Profile p = random_profile(r);
    analysis::Profile s = analysis::with_short_names(p);
    ASSERT_EQ(s.samples.size(), p.samples.size());
    ASSERT_LE(s.frames.size(), p.frames.size());
    for (size_t i = 0; i < p.samples.size(); ++i) {
      ASSERT_EQ(s.samples[i].stack.size(), p.samples[i].stack.size());
      for (size_t k = 0; k < p.samples[i].stack.size(); ++k) {
        if (p.samples[i].stack[k] < p.frames.size()) {
          EXPECT_LT(s.samples[i].stack[k], s.frames.size());
        }
      }
    }
    for (int i = 0; i < 50; ++i)
      analysis::short_cpp_name("std::" + analysis::testing::random_name(r));
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
