#include "export/flamegraph_svg.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "export/flamegraph_svg_script.h"
#include "export_test_profiles.h"

namespace strata::exporter {
namespace {

using namespace testing;

// A small XML well-formedness check, enough to catch what escaping bugs
// produce: unbalanced or misnested tags, raw '<' or '&' in text, bad
// entities, unquoted attributes and bytes XML forbids. The python check
// below runs a real parser where python3 exists.
::testing::AssertionResult well_formed(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << why << " at byte " << i;
  };
  auto check_entity = [&](size_t at) {
    size_t semi = xml.find(';', at);
    if (semi == std::string::npos) return false;
    std::string e = xml.substr(at, semi - at + 1);
    return e == "&amp;" || e == "&lt;" || e == "&gt;" || e == "&quot;" || e == "&apos;";
  };
  if (xml.rfind("<?xml ", 0) == 0) i = xml.find("?>") + 2;
  for (; i < xml.size(); ++i) {
    auto c = static_cast<unsigned char>(xml[i]);
    if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') return fail("control byte");
    if (c == '&' && !check_entity(i)) return fail("bad entity");
    if (c == '>') return fail("stray '>'");
    if (c != '<') continue;
    if (xml.compare(i, 9, "<![CDATA[") == 0) {  // the script: raw until "]]>"
      size_t close = xml.find("]]>", i + 9);
      if (close == std::string::npos) return fail("unterminated CDATA");
      i = close + 2;
      continue;
    }
    size_t end = i + 1;
    char quote = 0;
    for (; end < xml.size(); ++end) {
      char d = xml[end];
      if (quote) {
        if (d == quote)
          quote = 0;
        else if (d == '<')
          return fail("'<' in attribute");
        else if (d == '&' && !check_entity(end))
          return fail("bad entity in attribute");
      } else if (d == '"' || d == '\'') {
        quote = d;
      } else if (d == '>') {
        break;
      }
    }
    if (end == xml.size()) return fail("unterminated tag");
    std::string tag = xml.substr(i + 1, end - i - 1);
    static const std::regex kTag(R"(^(/?)([A-Za-z][\w:-]*)((\s+[\w:-]+="[^"]*")*)\s*(/?)$)");
    std::smatch m;
    if (!std::regex_match(tag, m, kTag)) return fail("malformed tag <" + tag.substr(0, 40) + ">");
    if (m[1].length()) {
      if (open.empty() || open.back() != m[2]) return fail("misnested </" + m[2].str() + ">");
      open.pop_back();
    } else if (!m[5].length()) {
      open.push_back(m[2]);
    }
    i = end;
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "unclosed <" << open.back() << ">";
  return ::testing::AssertionSuccess();
}

bool have_python() {
  return std::system("python3 -c 'import xml.dom.minidom' >/dev/null 2>&1") == 0;
}

::testing::AssertionResult python_parses(const std::string& xml) {
  auto path = std::filesystem::temp_directory_path() /
              ("strata_flamegraph_" + std::to_string(::getpid()) + ".svg");
  std::ofstream(path, std::ios::binary) << xml;
  std::string cmd =
      "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
      path.string();
  int rc = std::system(cmd.c_str());
  std::filesystem::remove(path);
  if (rc == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "python3 xml.dom.minidom rejected the SVG";
}

std::vector<std::string> titles(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at)) {
    at += 7;
    out.push_back(svg.substr(at, svg.find("</title>", at) - at));
  }
  return out;
}

// Width of the rectangle drawn for the frame whose title starts with `name (`.
double rect_width(const std::string& svg, const std::string& name) {
  std::regex re("<title>" + name +
                R"re( \([^<]*</title><rect x="[^"]*" y="[^"]*" width="([0-9.]+)")re");
  std::smatch m;
  if (!std::regex_search(svg, m, re)) {
    ADD_FAILURE() << "no frame " << name;
    return -1;
  }
  return std::stod(m[1]);
}

TEST(FlameGraphSvg, TitlesHoldNameShareAndSamples) {
  std::string svg = flamegraph_svg(abc_profile(), {});
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(titles(svg),
            (std::vector<std::string>{"all (100.00%, 5 samples)", "a (100.00%, 5 samples)",
                                      "b (80.00%, 4 samples)", "c (60.00%, 3 samples)"}));
}

// Zoom and search are one constant script (issue 22): the same bytes in every
// graph, in one CDATA section nothing can close early, and no name in an
// attribute or a handler.
TEST(FlameGraphSvg, OneConstantScriptAndNoHandlersInMarkup) {
  std::string svg = flamegraph_svg(abc_profile(), {});
  EXPECT_EQ(kFlameGraphScript.find("]]>"), std::string::npos);
  size_t at = svg.find("<script");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(svg.find("<script", at + 1), std::string::npos);
  std::string cdata = "<script type=\"text/ecmascript\"><![CDATA[" +
                      std::string(kFlameGraphScript) + "]]></script>";
  EXPECT_EQ(svg.compare(at, cdata.size(), cdata), 0);
  std::string markup = svg;
  markup.erase(at, cdata.size());
  EXPECT_EQ(markup.find(" on"), std::string::npos);  // onclick=, onload=, ...
  for (const char* id : {"id=\"unzoom\"", "id=\"search\"", "id=\"matched\"", "id=\"details\"",
                         "id=\"frames\"", "data-pad-x=\"10\""}) {
    EXPECT_NE(svg.find(id), std::string::npos) << id;
  }
}

TEST(FlameGraphSvg, WidthsAreProportionalToSamples) {
  analysis::Profile p = abc_profile();
  add_samples(p, 5, {"z"});  // a sibling of a: 10 samples in all
  FlameGraphOptions o;
  o.width = 1020;  // 1000 px of plot between the margins
  std::string svg = flamegraph_svg(p, o);
  EXPECT_DOUBLE_EQ(rect_width(svg, "all"), 1000);
  EXPECT_DOUBLE_EQ(rect_width(svg, "a"), 500);
  EXPECT_DOUBLE_EQ(rect_width(svg, "b"), 400);
  EXPECT_DOUBLE_EQ(rect_width(svg, "c"), 300);
  EXPECT_DOUBLE_EQ(rect_width(svg, "z"), 500);
}

TEST(FlameGraphSvg, RootAtTheBottomCalleesAbove) {
  std::string svg = flamegraph_svg(abc_profile(), {});
  auto y_of = [&](const std::string& name) {
    std::regex re("<title>" + name + R"re( \([^<]*</title><rect x="[^"]*" y="([0-9.]+)")re");
    std::smatch m;
    EXPECT_TRUE(std::regex_search(svg, m, re));
    return std::stod(m[1]);
  };
  EXPECT_GT(y_of("all"), y_of("a"));
  EXPECT_GT(y_of("a"), y_of("b"));
  EXPECT_GT(y_of("b"), y_of("c"));
}

TEST(FlameGraphSvg, DeterministicColorsAndTruncatedLabels) {
  analysis::Profile p;
  std::string long_name(300, 'x');
  add_samples(p, 1, {long_name, "main"});
  FlameGraphOptions o;
  o.width = 220;
  std::string a = flamegraph_svg(p, o);
  EXPECT_EQ(a, flamegraph_svg(p, o));
  // 200 px at 12 px * 0.59 per character: the label is cut with "..".
  std::smatch m;
  ASSERT_TRUE(std::regex_search(a, m, std::regex("<text [^>]*>(x+\\.\\.)</text>")));
  EXPECT_LT(m[1].length(), 30);
  EXPECT_NE(a.find("<title>" + long_name + " (100.00%, 1 sample)</title>"), std::string::npos);
}

TEST(FlameGraphSvg, HostileNamesStayWellFormed) {
  analysis::Profile p;
  std::string huge(10000, 'n');
  huge[5000] = '<';
  add_samples(p, 2, {"operator<<(std::ostream&, T const&)", "a \"quoted\" 'name' & more>"});
  add_samples(p, 1, {huge, std::string("ctl\x01\x02\x1b[31m\x7f bytes\n\r\t")});
  add_samples(p, 1, {std::string("bad utf8 \xff\xfe\xc3 end"), "]]> <!-- --> <![CDATA["});
  add_samples(p, 1, {std::string("nul\0inside", 10)});
  FlameGraphOptions o;
  o.title = "title <with> & \"markup\"";
  std::string svg = flamegraph_svg(p, o);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find("operator&lt;&lt;(std::ostream&amp;, T const&amp;)"), std::string::npos);
  EXPECT_NE(svg.find("a &quot;quoted&quot; &apos;name&apos; &amp; more&gt;"), std::string::npos);
  EXPECT_EQ(titles(svg).size(), 8u);  // all + 7 frames
  if (!have_python()) GTEST_SKIP() << "python3 with xml.dom.minidom not found";
  EXPECT_TRUE(python_parses(svg));
  EXPECT_TRUE(python_parses(flamegraph_svg(abc_profile(), {})));
}

TEST(FlameGraphSvg, NarrowFramesAreLeftOut) {
  analysis::Profile p;
  add_samples(p, 10000, {"wide"});
  add_samples(p, 1, {"tiny", "narrow_parent"});
  FlameGraphOptions o;
  o.min_width_px = 1;
  std::string svg = flamegraph_svg(p, o);
  EXPECT_EQ(svg.find("narrow_parent"), std::string::npos);
  EXPECT_NE(svg.find("wide ("), std::string::npos);
  EXPECT_TRUE(well_formed(svg));
}

TEST(FlameGraphSvg, InstrumentedShowsTime) {
  analysis::Profile p;
  p.mode = analysis::ProfileMode::kInstrumented;
  analysis::FrameId m = frame(p, "main");
  p.calls.push_back(
      {1, 1, {{0, m, analysis::CallKind::kEnter}, {2500000, m, analysis::CallKind::kExit}}});
  std::string svg = flamegraph_svg(p, {});
  EXPECT_NE(svg.find("<title>main (100.00%, 2.500 ms)</title>"), std::string::npos) << svg;
}

TEST(FlameGraphSvg, EmptyProfileSaysSo) {
  std::string svg = flamegraph_svg(analysis::Profile{}, {});
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find("no samples"), std::string::npos);
}

}  // namespace
}  // namespace strata::exporter
