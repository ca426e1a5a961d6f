// strata diagnose's verdict: which layer explains the time, and --range.
#include "analysis/diagnose_verdict.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

store::BenchRun run(int64_t wall_ms, int64_t cpu_ms, int exit_status = 0, bool warmup = false) {
  store::BenchRun r;
  r.label = "A";
  r.warmup = warmup;
  r.wall_ns = wall_ms * 1'000'000;
  r.user_ns = cpu_ms * 1'000'000;
  r.exit_status = exit_status;
  return r;
}

TEST(DiagnoseVerdict, BaselineLeavesOutWarmupsAndFailures) {
  std::vector<store::BenchRun> runs = {run(1000, 1000, 0, true), run(100, 90), run(120, 100),
                                       run(110, 95), run(5, 1, 2)};
  BaselineFacts b = baseline_facts(runs);
  EXPECT_EQ(b.runs, 4u);
  EXPECT_EQ(b.succeeded, 3u);
  ASSERT_TRUE(b.wall_ns.has_value());
  EXPECT_EQ(b.wall_ns->median, 110e6);
  EXPECT_NEAR(b.on_cpu, 95.0 / 110.0, 1e-12);
  EXPECT_GT(b.wall_cv, 0);
}

// The recorded run beside the bare ones: its wall and CPU time over the
// baseline's medians, so that a reader sees how far the layers' figures are
// from a bare run's; none without the CPU layer's wall time.
TEST(DiagnoseVerdict, RecordedRunIsComparedWithTheBaselineMedians) {
  const std::vector<store::BenchRun> runs = {run(100, 90), run(120, 100), run(110, 95)};
  const BaselineFacts b = baseline_facts(runs);
  Profile recorded;
  recorded.wall_ns = 220'000'000;
  recorded.cpu_ns = 190'000'000;
  auto f = recorded_run_facts(recorded, b);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->wall_ns, 220'000'000);
  EXPECT_NEAR(f->wall_ratio, 2.0, 1e-12);
  EXPECT_NEAR(f->cpu_ratio, 2.0, 1e-12);

  EXPECT_EQ(recorded_run_facts(recorded, baseline_facts({})).value().wall_ratio, 0);
  recorded.wall_ns = 0;
  EXPECT_FALSE(recorded_run_facts(recorded, b).has_value());

  VerdictInput in;
  in.bench = runs;
  recorded.wall_ns = 330'000'000;
  in.cpu = recorded;
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->recorded.has_value());
  EXPECT_NEAR(v->recorded->wall_ratio, 3.0, 1e-12);
  EXPECT_FALSE(v->recorded->minor_faults.has_value());
}

// The page faults beside each other: the baseline's over the runs that
// recorded them (an older trace's runs have none), the recorded run's own.
TEST(DiagnoseVerdict, PageFaultsOfTheBaselineAndTheRecordedRun) {
  std::vector<store::BenchRun> runs = {run(100, 90), run(120, 100), run(110, 95), run(90, 80)};
  runs[0].minor_faults = 9'000;
  runs[1].minor_faults = 12'000;
  runs[2].minor_faults = 10'000;
  const BaselineFacts b = baseline_facts(runs);
  ASSERT_TRUE(b.minor_faults.has_value());
  EXPECT_EQ(b.minor_faults->count, 3u);
  EXPECT_EQ(b.minor_faults->median, 10'000);
  EXPECT_FALSE(baseline_facts(std::vector<store::BenchRun>{run(100, 90)}).minor_faults);

  Profile recorded;
  recorded.wall_ns = 300'000'000;
  recorded.minor_faults = 127'363;
  auto f = recorded_run_facts(recorded, b);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->minor_faults, 127'363);
}

// A Python program's hottest function is its work's, not start-up's: an
// import that holds most samples (`import torch` loading its extensions)
// is left out, and the shares are of the samples after start-up.
TEST(DiagnoseVerdict, PythonHottestFunctionsAreOfTheWorkAfterStartup) {
  Profile p;
  p.mode = ProfileMode::kPerfEvent;
  p.rate_hz = 1000;
  auto py = [&](const std::string& function, const std::string& file) {
    return p.frames.intern({function, file, 1, "[perf-1.map]", 0, false});
  };
  const FrameId main_f = py("<module>", "/app/main.py");
  const FrameId load = py("_find_and_load", "<frozen importlib._bootstrap>");
  const FrameId torch_init = py("<module>", "/venv/lib/python3.12/site-packages/torch/__init__.py");
  const FrameId work = py("train_step", "/app/main.py");
  const FrameId other = py("log", "/app/main.py");
  for (int i = 0; i < 100; ++i) {
    Sample s;
    s.pid = s.tid = 1;
    s.time_ns = i * 1'000'000;
    s.weight_ns = 1'000'000;
    s.stack = i < 60   ? std::vector<FrameId>{torch_init, load, main_f}
              : i < 90 ? std::vector<FrameId>{work, main_f}
                       : std::vector<FrameId>{other, main_f};
    p.samples.push_back(std::move(s));
  }
  const CpuFacts f = cpu_facts(p);
  EXPECT_EQ(f.samples, 100u);
  EXPECT_TRUE(f.hottest_after_startup);
  ASSERT_FALSE(f.hottest.empty());
  EXPECT_NE(f.hottest.front().label.find("train_step"), std::string::npos)
      << f.hottest.front().label;
  EXPECT_NEAR(f.hottest.front().share, 0.75, 1e-9);  // 30 of the 40 samples after start-up
  EXPECT_EQ(f.import_ns, 60'000'000);
}

TEST(DiagnoseVerdict, OnCpuProgramIsExplainedByTheCpu) {
  VerdictInput in;
  in.bench = {run(100, 98), run(102, 99)};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->explained_by, "cpu");
  EXPECT_NE(v->verdict.find("on the CPU"), std::string::npos) << v->verdict;
  EXPECT_TRUE(v->findings.empty());
}

// The verdict carries every layer's findings, not the GPU timeline's only:
// a CPU-only program's recorded samples give cpu.hotspot, with its share of
// the run (the rules' cpu_base_ns).
TEST(DiagnoseVerdict, CpuRulesFindingsReachTheVerdict) {
  VerdictInput in;
  in.bench = {run(100, 98), run(102, 99)};
  Profile p;
  p.mode = ProfileMode::kPerfEvent;
  p.rate_hz = 1000;
  p.wall_ns = 100'000'000;
  p.processes.push_back({100, "prog"});
  const FrameId main_f = p.frames.intern({"main", "src/main.cc", 10, "/bin/prog", 0x10});
  const FrameId hot_f = p.frames.intern({"hot_loop", "src/hot.cc", 3, "/bin/prog", 0x20});
  for (int i = 0; i < 100; ++i) {
    Sample s;
    s.pid = s.tid = 100;
    s.time_ns = 1'000'000'000 + i * 1'000'000;
    s.weight_ns = 1'000'000;
    s.stack = i < 80 ? std::vector<FrameId>{hot_f, main_f} : std::vector<FrameId>{main_f};
    p.samples.push_back(std::move(s));
  }
  in.cpu = p;
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->explained_by, "cpu");
  ASSERT_FALSE(v->findings.empty());
  EXPECT_EQ(v->findings[0].rule, "cpu.hotspot");
  EXPECT_EQ(v->findings[0].gain_ns, 80'000'000);
  EXPECT_EQ(v->cpu_base_ns, 100'000'000);
  EXPECT_FALSE(v->gpu.has_value()) << "no GPU activity";
}

TEST(DiagnoseVerdict, SleepingProgramIsExplainedOffCpu) {
  VerdictInput in;
  in.bench = {run(300, 2), run(301, 3)};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->explained_by, "off-cpu");
  // min_share decides what counts: off-CPU under it is no cause.
  in.bench = {run(100, 95), run(100, 96)};
  in.thresholds.min_share = 0.10;
  EXPECT_EQ(build_verdict(in)->explained_by, "cpu");
}

TEST(DiagnoseVerdict, NoSuccessfulRunGivesNoVerdict) {
  VerdictInput in;
  in.bench = {run(10, 5, 1)};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->explained_by, "");
  EXPECT_NE(v->verdict.find("no verdict"), std::string::npos);
}

TEST(DiagnoseVerdict, RangeThatNamesNothingIsAnError) {
  VerdictInput in;
  in.bench = {run(10, 10)};
  in.range = "train_step";
  auto v = build_verdict(in);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("--range 'train_step'"), std::string::npos);
}

TEST(DiagnoseVerdict, RangeRestrictsRowsAndSamples) {
  store::TorchOp op;
  op.name = "step";
  op.start = 100;
  op.end = 200;
  store::TorchOp other = op;
  other.name = "other";
  other.start = 0;
  other.end = 1000;
  store::GpuTables gpu;
  gpu.kernels.start = {50, 150, 250};
  gpu.kernels.end = {60, 160, 260};
  gpu.kernels.name_id = {1, 2, 3};
  std::vector<store::TorchOp> ops = {op, other};
  auto span = find_range("step", gpu, ops);
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->start, 100);
  EXPECT_EQ(span->end, 200);
  EXPECT_EQ(span->instances, 1);
  store::GpuTables inside = restrict_to(gpu, *span);
  EXPECT_EQ(inside.kernels.start, std::vector<int64_t>{150});
  EXPECT_EQ(inside.kernels.name_id, std::vector<int64_t>{2});
  Profile p;
  p.samples.resize(3);
  p.samples[0].time_ns = 99;
  p.samples[1].time_ns = 150;
  p.samples[2].time_ns = 201;
  EXPECT_EQ(restrict_to(p, *span).samples.size(), 1u);
  EXPECT_FALSE(find_range("nothing", gpu, ops).has_value());
}

TEST(DiagnoseVerdict, TopKernelsByTotalTime) {
  store::GpuTables gpu;
  gpu.kernels.start = {0, 10, 20, 30};
  gpu.kernels.end = {5, 12, 40, 35};
  gpu.kernels.name_id = {1, 2, 3, 1};
  gpu.strings = {{1, "a"}, {2, "b"}, {3, "c"}};
  EXPECT_EQ(top_kernels(gpu, 2), (std::vector<std::string>{"c", "a"}));
  // c has 20 of 32 ns, a 10, b 2 (6 %): below a 10 % share, b costs a
  // kernel-metrics run that no kernel rule would read.
  EXPECT_EQ(top_kernels(gpu, 3), (std::vector<std::string>{"c", "a", "b"}));
  EXPECT_EQ(top_kernels(gpu, 3, 0.10), (std::vector<std::string>{"c", "a"}));
  EXPECT_EQ(top_kernels(gpu, 3, 0.5), (std::vector<std::string>{"c"}));
}

}  // namespace
}  // namespace strata::analysis
