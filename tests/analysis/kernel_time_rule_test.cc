// cpu.kernel_time: the kernel's time faulting memory in again, which the
// samples cannot show, read from the bare runs' rusage (build_verdict's whole
// path: baseline medians, the rule, the verdict).
#include <gtest/gtest.h>

#include "analysis/diagnose_verdict.h"

namespace strata::analysis {
namespace {

// A bare run: `user_ms` + `sys_ms` of CPU time, `faults` minor faults (4 KiB
// each) and a peak RSS of `rss_mib`.
store::BenchRun run(int64_t wall_ms, int64_t user_ms, int64_t sys_ms, int64_t faults,
                    int64_t rss_mib) {
  store::BenchRun r;
  r.label = "A";
  r.wall_ns = wall_ms * 1'000'000;
  r.user_ns = user_ms * 1'000'000;
  r.sys_ns = sys_ms * 1'000'000;
  r.minor_faults = faults;
  r.max_rss_kb = rss_mib * 1024;
  r.exit_status = 0;
  return r;
}

const Finding* find(const DiagnoseVerdict& v, std::string_view rule) {
  for (const Finding& f : v.findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

// 100 MiB faulted in 5 times over (128,000 faults of 4 KiB = 500 MiB), 600 of
// 1,000 ms of CPU in the kernel: the faults beyond one fault-in of the peak
// RSS (4/5 of them) are what reusing the memory saves.
TEST(KernelTimeRule, MemoryFaultedInAgainIsNamedWithItsShareOfTheKernelTime) {
  VerdictInput in;
  in.bench = {run(1000, 400, 600, 128'000, 100), run(1010, 410, 600, 128'000, 100),
              run(990, 390, 600, 128'000, 100)};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  const Finding* f = find(*v, "cpu.kernel_time");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->gain_ns, 480'000'000);  // 600 ms x (1 - 100 / 500)
  EXPECT_NE(f->cause.find("5.0 times its peak RSS"), std::string::npos) << f->cause;
  EXPECT_NE(f->cause.find("60.0 % of the CPU time"), std::string::npos) << f->cause;
  ASSERT_EQ(v->findings.front().rule, "cpu.kernel_time");
  EXPECT_EQ(v->explained_by, "cpu");
  EXPECT_NE(v->verdict.find("cpu.kernel_time could save up to 480 ms"), std::string::npos)
      << v->verdict;
}

// Faulting memory in once is every program's floor: a program that touches
// 400 MiB once (a model loaded, a big array filled) spends kernel time on it
// and gets no finding.
TEST(KernelTimeRule, MemoryTouchedOnceIsNoFinding) {
  VerdictInput in;
  in.bench = {run(1000, 400, 600, 102'400, 400), run(1000, 400, 600, 102'400, 400)};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(find(*v, "cpu.kernel_time"), nullptr);
}

// Re-faulting that costs the kernel little against the program's own work.
TEST(KernelTimeRule, LittleKernelTimeIsNoFinding) {
  VerdictInput in;
  in.bench = {run(1000, 850, 150, 128'000, 100), run(1000, 850, 150, 128'000, 100)};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(find(*v, "cpu.kernel_time"), nullptr);
  // The thresholds are the documented, overridable ones.
  in.thresholds.kernel_time_share = 0.05;
  EXPECT_NE(find(*build_verdict(in), "cpu.kernel_time"), nullptr);
  in.thresholds.refault_ratio = 6;
  EXPECT_EQ(find(*build_verdict(in), "cpu.kernel_time"), nullptr);
}

// A trace from before strata stored page faults has none to judge by.
TEST(KernelTimeRule, RunsWithoutPageFaultsAreNotJudged) {
  VerdictInput in;
  store::BenchRun r = run(1000, 400, 600, 0, 100);
  r.minor_faults.reset();
  in.bench = {r, r};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(find(*v, "cpu.kernel_time"), nullptr);
}

// The baseline's kernel time is the whole run's: inside --range it is not
// judged, and the report says so.
TEST(KernelTimeRule, ARangeLeavesItUnchecked) {
  DiagnosisInputs in;
  in.kernel_time = KernelTimeFacts{.runs = 3,
                                   .wall_ns = 1'000'000'000,
                                   .cpu_ns = 1'000'000'000,
                                   .sys_ns = 600'000'000,
                                   .minor_faults = 128'000,
                                   .peak_rss_kb = 100 * 1024};
  EXPECT_EQ(diagnose(in, {}).findings.size(), 1u);
  in.window = TimeWindow{.start = 0, .end = 100'000'000, .name = "step"};
  const Diagnosis d = diagnose(in, {});
  EXPECT_TRUE(d.findings.empty());
  ASSERT_EQ(d.not_checked.size(), 1u);
  EXPECT_EQ(d.not_checked[0].rfind("cpu.kernel_time:", 0), 0u) << d.not_checked[0];
}

}  // namespace
}  // namespace strata::analysis
