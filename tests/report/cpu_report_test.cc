#include "report/cpu_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::report {
namespace {

using analysis::CallKind;
using analysis::FrameId;
using analysis::Profile;

constexpr int64_t kMs = 1000000;

FrameId fn(Profile& p, const std::string& name, const std::string& file, int line) {
  analysis::Frame f;
  f.function = name;
  f.file = file;
  f.line = line;
  return p.frames.intern(f);
}

// main [0, 100 ms] -> fact [10, 60] -> fact [20, 50] -> fact [30, 40].
Profile instrumented() {
  Profile p;
  p.mode = analysis::ProfileMode::kInstrumented;
  p.wall_ns = 120 * kMs;
  p.cpu_ns = 100 * kMs;
  p.instrument_overhead_ns_per_call = 21.25;
  p.threads = {{7, 7, "fact"}};
  p.processes = {{7, "./fact"}};
  FrameId main = fn(p, "main", "fact.cc", 9);
  FrameId fact = fn(p, "fact", "fact.cc", 3);
  p.calls.push_back({7,
                     7,
                     {{0, main, CallKind::kEnter},
                      {10 * kMs, fact, CallKind::kEnter},
                      {20 * kMs, fact, CallKind::kEnter},
                      {30 * kMs, fact, CallKind::kEnter},
                      {40 * kMs, fact, CallKind::kExit},
                      {50 * kMs, fact, CallKind::kExit},
                      {60 * kMs, fact, CallKind::kExit},
                      {100 * kMs, main, CallKind::kExit}}});
  return p;
}

Profile sampled() {
  Profile p;
  p.mode = analysis::ProfileMode::kPerfEvent;
  p.rate_hz = 1000;
  p.wall_ns = 10 * kMs;
  p.cpu_ns = 5 * kMs;
  p.lost_samples = 1;
  FrameId a = fn(p, "main", "app.cc", 10);
  FrameId b = fn(p, "work", "app.cc", 3);
  for (int i = 0; i < 3; ++i) p.samples.push_back({1, 1, i * kMs, kMs, {b, a}});
  p.samples.push_back({1, 1, 4 * kMs, kMs, {a}});
  return p;
}

std::string report(const Profile& p, Format f, analysis::CpuTableOptions o = {},
                   bool threads = false) {
  auto t = analysis::cpu_function_table(p, o);
  EXPECT_TRUE(t);
  return render_cpu_profile(
      analysis::cpu_header(p), *t,
      threads ? analysis::cpu_threads(p) : std::vector<analysis::CpuThreadRow>{}, f);
}

TEST(CpuReport, InstrumentedTableIsPstatsLayout) {
  EXPECT_EQ(report(instrumented(), Format::kTable),
            "         4 function calls (2 primitive calls) in 0.100 seconds (instrumented)\n"
            "   calibrated: the instrumentation's own 21.2 ns per call (measured at start) is "
            "subtracted from every time\n"
            "   wall 0.120 s, CPU 0.100 s, 1 thread, 1 process\n"
            "\n"
            "   Ordered by: cumulative time\n"
            "\n"
            "ncalls  tottime  percall  cumtime  percall  filename:lineno(function)\n"
            "------  -------  -------  -------  -------  -------------------------\n"
            "     1    0.050    0.050    0.100    0.100  fact.cc:9(main)\n"
            "   3/1    0.050    0.017    0.050    0.050  fact.cc:3(fact)\n");
}

TEST(CpuReport, SampledHeaderSaysNcallsAreSamples) {
  analysis::CpuTableOptions o;
  o.sort = {analysis::CpuSort::kTottime};
  o.limit = 1;
  EXPECT_EQ(report(sampled(), Format::kTable, o),
            "         4 samples in 0.004 seconds (perf_event sampling at 1000 Hz)\n"
            "   1 lost, 0 throttles, effective rate 800 Hz of CPU time\n"
            "   wall 0.010 s, CPU 0.005 s, 1 thread, 1 process\n"
            "   sampled: ncalls = leaf samples, times = samples x period, percall per sample\n"
            "\n"
            "   Ordered by: internal time\n"
            "   List reduced from 2 to 1 due to restriction <1>\n"
            "\n"
            "ncalls  tottime  percall  cumtime  percall  filename:lineno(function)\n"
            "------  -------  -------  -------  -------  -------------------------\n"
            "     3    0.003    0.001    0.003    0.001  app.cc:3(work)\n");
}

TEST(CpuReport, BlankPercallAndFilterRestriction) {
  analysis::CpuTableOptions o;
  o.filter = "main";
  std::string out = report(sampled(), Format::kTable, o);
  EXPECT_NE(out.find("List reduced from 2 to 1 due to restriction <'main'>"), std::string::npos)
      << out;
  EXPECT_NE(out.find("     1    0.001    0.001    0.004    0.001  app.cc:10(main)"),
            std::string::npos)
      << out;
}

TEST(CpuReport, CrashRepairsAreShown) {
  Profile p = instrumented();
  p.calls[0].events.resize(5);  // died inside the two outer fact calls
  std::string out = report(p, Format::kTable);
  EXPECT_NE(out.find("3 calls still open at the end"), std::string::npos) << out;
}

TEST(CpuReport, JsonHasHeaderFunctionsAndThreadsWithDistinctPercallKeys) {
  auto doc = nlohmann::json::parse(report(instrumented(), Format::kJson, {}, true));
  EXPECT_EQ(doc["header"]["mode"], "instrumented");
  EXPECT_EQ(doc["header"]["function_calls"], 4);
  ASSERT_EQ(doc["functions"].size(), 2u);
  const auto& fact = doc["functions"][1];
  EXPECT_EQ(fact["filename:lineno(function)"], "fact.cc:3(fact)");
  EXPECT_EQ(fact["ncalls"], 3);
  EXPECT_EQ(fact["pcalls"], 1);
  EXPECT_DOUBLE_EQ(fact["tottime_percall"].get<double>(), 0.05 / 3);
  EXPECT_DOUBLE_EQ(fact["cumtime_percall"].get<double>(), 0.05);
  ASSERT_EQ(doc["threads"].size(), 1u);
  EXPECT_EQ(doc["threads"][0]["Thread"], "fact");
  EXPECT_EQ(doc["threads"][0]["Calls"], 4);
}

TEST(CpuReport, CsvColumns) {
  std::string csv = report(sampled(), Format::kCsv);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "ncalls,samples,tottime,tottime_percall,cumtime,cumtime_percall,"
            "filename:lineno(function)");
  EXPECT_NE(csv.find("\n1,4,0.001,0.001,0.004,0.001,app.cc:10(main)\n"), std::string::npos) << csv;
}

TEST(CpuReport, PerThreadRowsAndThreadsTable) {
  analysis::CpuTableOptions o;
  o.per_thread = true;
  std::string out = report(sampled(), Format::kTable, o, true);
  EXPECT_NE(out.find("tid  ncalls  tottime"), std::string::npos) << out;
  EXPECT_NE(out.find("\nThreads\n\nTID  PID  Samples  Share (%)  Time (s)  Idle (s)  Idle in  "
                     "Thread\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  1    1        4      100.0     0.004     0.000           \n"),
            std::string::npos)
      << out;
}

// A terminal too narrow for the longest label: every row loses its
// directories, the short ones too, so one file reads alike in every row.
TEST(CpuReport, NarrowTerminalDropsDirectoriesFromEveryRow) {
  Profile p;
  p.mode = analysis::ProfileMode::kPerfEvent;
  p.rate_hz = 1000;
  p.wall_ns = 10 * kMs;
  p.cpu_ns = 5 * kMs;
  FrameId outer = fn(p, "count_words_slow", "/src/examples/cpu_hotspot.py", 77);
  FrameId inner = fn(p, "normalize_line_slow_with_a_name_long_enough_to_overflow_the_terminal",
                     "/src/examples/cpu_hotspot.py", 60);
  for (int i = 0; i < 3; ++i) p.samples.push_back({1, 1, i * kMs, kMs, {inner, outer}});
  set_text_width(100);  // room for the short label with its path, not the long one
  const std::string text = report(p, Format::kTable);
  set_text_width(0);
  EXPECT_NE(text.find("cpu_hotspot.py:77(count_words_slow)"), std::string::npos) << text;
  EXPECT_EQ(text.find("/src/examples/"), std::string::npos) << text;
  // Without a limit, both keep their paths.
  const std::string wide = report(p, Format::kTable);
  EXPECT_NE(wide.find("/src/examples/cpu_hotspot.py:77(count_words_slow)"), std::string::npos);
}

TEST(CpuReport, SharesTable) {
  Table t =
      cpu_shares_table(analysis::top_self_shares(sampled(), 1), analysis::ProfileMode::kPerfEvent);
  EXPECT_EQ(render(t, Format::kCsv),
            "Share (%),Self samples,Self (s),filename:lineno(function)\n"
            "75.0,3,0.003,app.cc:3(work)\n");
}

}  // namespace
}  // namespace strata::report

namespace strata::report {
namespace {

// Idle-spinning samples (analysis/idle_frames.h): the header names their
// time and says whether the table lists them; the thread table says which
// thread idled in what.
TEST(CpuReport, IdleTimeInTheHeaderAndTheThreadTable) {
  Profile p = sampled();
  analysis::Frame server;
  server.function = "blas_thread_server";
  server.module = "/usr/lib/libopenblas.so.0";
  FrameId s = p.frames.intern(server);
  p.samples.push_back({2, 1, 5 * kMs, kMs, {s}});
  p.samples.push_back({2, 1, 6 * kMs, kMs, {s}});
  analysis::CpuHeader h = analysis::cpu_header(p);
  auto t = analysis::cpu_function_table(analysis::without_idle(p), {});
  ASSERT_TRUE(t);
  std::string out = render_cpu_profile(h, *t, analysis::cpu_threads(p), Format::kTable);
  EXPECT_NE(out.find("   idle-spinning threads: 2 samples (0.002 s, 33.3 % of the time): OpenBLAS "
                     "thread server waiting for work 0.002 s\n"
                     "   idle samples are left out of the table; --idle lists them\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("blas_thread_server"), std::string::npos) << out;
  EXPECT_NE(out.find("Time (s)  Idle (s)  Idle in"), std::string::npos) << out;
  EXPECT_NE(out.find("0.002  OpenBLAS thread server waiting for work"), std::string::npos) << out;

  h.idle_shown = true;
  auto all = analysis::cpu_function_table(p, {});
  ASSERT_TRUE(all);
  out = render_cpu_profile(h, *all, {}, Format::kTable);
  EXPECT_NE(out.find("   idle samples are listed in the table (--idle)\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("(blas_thread_server)"), std::string::npos) << out;

  auto doc = nlohmann::json::parse(render_cpu_profile(h, *all, {}, Format::kJson));
  EXPECT_EQ(doc["header"]["idle_samples"], 2);
  EXPECT_DOUBLE_EQ(doc["header"]["idle_s"].get<double>(), 0.002);
  EXPECT_EQ(doc["header"]["idle_shown"], true);
  ASSERT_EQ(doc["header"]["idle_by"].size(), 1u);
  EXPECT_EQ(doc["header"]["idle_by"][0]["what"], "OpenBLAS thread server waiting for work");
  EXPECT_EQ(doc["header"]["idle_by"][0]["samples"], 2);

  // A profile without idle samples prints no idle line.
  EXPECT_EQ(report(sampled(), Format::kTable).find("idle"), std::string::npos);
}

}  // namespace
}  // namespace strata::report
