#include "report/cpu_callers_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::report {
namespace {

using analysis::FrameId;
using analysis::Profile;

constexpr int64_t kMs = 1000000;

FrameId fn(Profile& p, const std::string& name, int line) {
  analysis::Frame f;
  f.function = name;
  f.file = "prog.py";
  f.line = line;
  return p.frames.intern(f);
}

// <module> calls work (3 ms) and loop, which calls work (2 ms).
Profile sampled() {
  Profile p;
  p.rate_hz = 1000;
  FrameId module = fn(p, "<module>", 1);
  FrameId loop = fn(p, "loop", 4);
  FrameId work = fn(p, "work", 9);
  auto add = [&](int n, std::vector<FrameId> stack) {
    for (int i = 0; i < n; ++i) p.samples.push_back({1, 1, i * kMs, kMs, stack});
  };
  add(3, {work, module});
  add(2, {work, loop, module});
  return p;
}

std::string render_view(const Profile& p, CallView view, Format format) {
  analysis::CpuTableOptions o;
  o.sort = {analysis::CpuSort::kCumtime};
  auto t = analysis::cpu_function_table(p, o);
  EXPECT_TRUE(t);
  return render_cpu_calls(analysis::cpu_header(p), *t, analysis::cpu_call_edges(p, {}), view,
                          format);
}

std::string after_header(const std::string& text) {
  size_t at = text.find("Function ");
  EXPECT_NE(at, std::string::npos) << text;
  return text.substr(at);
}

// Column for column pstats' print_callers: the name padded to the widest
// listed name + 2, "<-", counts right-aligned in 7 (9 on later lines), f8 times.
TEST(CpuCallersReport, CallersReadLikePstats) {
  std::string text = render_view(sampled(), CallView::kCallers, Format::kTable);
  EXPECT_NE(text.find("Ordered by: cumulative time"), std::string::npos);
  EXPECT_EQ(after_header(text),
            "Function             was called by...\n"
            "                         ncalls  tottime  cumtime\n"
            "prog.py:1(<module>)  <- \n"
            "prog.py:9(work)      <-       3    0.003    0.003  prog.py:1(<module>)\n"
            "                              2    0.002    0.002  prog.py:4(loop)\n"
            "prog.py:4(loop)      <-       0    0.000    0.002  prog.py:1(<module>)\n");
}

TEST(CpuCallersReport, CalleesReadLikePstats) {
  std::string text = render_view(sampled(), CallView::kCallees, Format::kTable);
  EXPECT_EQ(after_header(text),
            "Function             called...\n"
            "                         ncalls  tottime  cumtime\n"
            "prog.py:1(<module>)  ->       0    0.000    0.002  prog.py:4(loop)\n"
            "                              3    0.003    0.003  prog.py:9(work)\n"
            "prog.py:9(work)      -> \n"
            "prog.py:4(loop)      ->       2    0.002    0.002  prog.py:9(work)\n");
}

TEST(CpuCallersReport, JsonHasOneObjectPerEdge) {
  auto doc = nlohmann::json::parse(render_view(sampled(), CallView::kCallers, Format::kJson));
  ASSERT_EQ(doc.size(), 3u);
  EXPECT_EQ(doc[0]["function"], "prog.py:9(work)");
  EXPECT_EQ(doc[0]["caller"], "prog.py:1(<module>)");
  EXPECT_EQ(doc[0]["ncalls"], 3);
  EXPECT_DOUBLE_EQ(doc[0]["cumtime"].get<double>(), 0.003);
}

}  // namespace
}  // namespace strata::report
