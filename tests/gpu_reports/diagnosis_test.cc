// The GPU-timeline diagnosis (analysis/gpu_idle.h, analysis/diagnosis.h,
// report/diagnosis_report.h): the idle breakdown on tables built by hand, so
// every nanosecond can be checked, and the tutorial's conclusions on the real
// H200 captures of gpu_matmul (tests/data/trace-gpu_matmul-*): slow_loop_sync
// is launch/sync-bound with a 16-block grid; batched has no launch/sync finding.
#include "analysis/diagnosis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "analysis/diagnose_verdict.h"
#include "analysis/gpu_idle.h"
#include "report/diagnosis_report.h"
#include "store/gpu_tables.h"
#include "store/trace_db.h"

namespace strata::analysis {
namespace {

TEST(ApiRole, NamesSortIntoSyncLaunchAndOther) {
  EXPECT_EQ(api_role("cudaDeviceSynchronize_v3020"), ApiRole::kSync);
  EXPECT_EQ(api_role("cudaStreamSynchronize"), ApiRole::kSync);
  EXPECT_EQ(api_role("cuCtxSynchronize"), ApiRole::kSync);
  EXPECT_EQ(api_role("cudaMemcpy_v3020"), ApiRole::kSync) << "a synchronous copy waits";
  EXPECT_EQ(api_role("cudaFree_v3020"), ApiRole::kSync) << "cudaFree synchronizes the device";
  EXPECT_EQ(api_role("cudaMemcpyAsync_v3020"), ApiRole::kLaunch);
  EXPECT_EQ(api_role("cudaFreeAsync_v11020"), ApiRole::kOther);
  EXPECT_EQ(api_role("cudaFreeHost_v3020"), ApiRole::kOther);
  EXPECT_EQ(api_role("cudaLaunchKernel_v7000"), ApiRole::kLaunch);
  EXPECT_EQ(api_role("cuLaunchKernelEx"), ApiRole::kLaunch);
  EXPECT_EQ(api_role("cudaGraphLaunch_v10000"), ApiRole::kLaunch);
  EXPECT_EQ(api_role("cudaMalloc_v3020"), ApiRole::kOther);
  EXPECT_EQ(api_role(""), ApiRole::kOther);
}

// One thread (pid 1, tid 2) launching kernels; names interned by hand.
struct Builder {
  store::GpuTables t;
  int64_t tid = (int64_t{1} << 24) | 2;
  int64_t next_correlation = 1;

  Builder() {
    t.strings = {{1, "cudaLaunchKernel_v7000"},
                 {2, "cudaDeviceSynchronize_v3020"},
                 {3, "cudaMalloc_v3020"},
                 {4, "gemm"},
                 {5, "cuCtxSynchronize"}};
  }
  int64_t call(int64_t name, int64_t start, int64_t end) {
    const int64_t c = next_correlation++;
    t.runtime.start.push_back(start);
    t.runtime.end.push_back(end);
    t.runtime.global_tid.push_back(tid);
    t.runtime.correlation_id.push_back(c);
    t.runtime.name_id.push_back(name);
    return c;
  }
  void kernel(int64_t correlation, int64_t start, int64_t end, int64_t blocks = 200) {
    t.kernels.start.push_back(start);
    t.kernels.end.push_back(end);
    t.kernels.name_id.push_back(4);
    t.kernels.device_id.push_back(0);
    t.kernels.correlation_id.push_back(correlation);
    t.kernels.global_pid.push_back(int64_t{1} << 24);
    t.kernels.launch.grid.push_back({blocks, 1, 1});
    t.kernels.launch.block.push_back({128, 1, 1});
    t.kernels.launch.stream_id.push_back(7);
    t.sm_counts[0] = 132;
  }
};

TEST(GpuIdle, EachGapIsChargedToWhatTheIssuingThreadWasDoing) {
  Builder b;
  b.call(3, 0, 50);  // start-up: before the first kernel
  // Kernel 1 at [100, 200), launched by [90, 100).
  b.kernel(b.call(1, 90, 100), 100, 200);
  // The host syncs [200, 230), runs its own code [230, 260), launches
  // [260, 270): kernel 2 at [275, 300), after 5 ns in the queue.
  b.call(2, 200, 230);
  b.kernel(b.call(1, 260, 270), 275, 300);
  GpuIdle idle = gpu_idle(b.t);
  ASSERT_TRUE(idle.has_activity);
  EXPECT_EQ(idle.first_api_start, 0);
  EXPECT_EQ(idle.window_start, 100);
  EXPECT_EQ(idle.window_end, 300);
  EXPECT_EQ(idle.busy_ns, 125);
  EXPECT_EQ(idle.gaps, 1);
  EXPECT_EQ(idle.idle.sync_ns, 30);
  EXPECT_EQ(idle.idle.host_ns, 30);
  EXPECT_EQ(idle.idle.launch_ns, 10);
  EXPECT_EQ(idle.idle.queued_ns, 5) << "[270, 275): the launch had returned";
  EXPECT_EQ(idle.idle.other_api_ns, 0);
  EXPECT_EQ(idle.idle.unattributed_ns, 0);
  EXPECT_EQ(idle.idle_ns(), 75);
}

// A driver sync nested in a runtime sync: the gap is sync time throughout
// (the enclosing call is found although a nested one ended before the gap),
// and the nested call is not counted as a second synchronization.
TEST(GpuIdle, NestedCallsAreFoundAndCountedOnce) {
  Builder b;
  int64_t t = 0;
  for (int i = 0; i < 10; ++i) {
    b.kernel(b.call(1, t, t + 10), t + 12, t + 17, /*blocks=*/264);
    b.call(2, t + 10, t + 90);  // cudaDeviceSynchronize, well past the kernel
    b.call(5, t + 11, t + 14);  // cuCtxSynchronize inside it, ended before the gap
    t += 100;
  }
  GpuIdle idle = gpu_idle(b.t);
  // Each gap [t+17, t+112): sync until t+90, host [t+90, t+100), launch
  // [t+100, t+110), queued [t+110, t+112).
  EXPECT_EQ(idle.idle.sync_ns, 9 * 73);
  EXPECT_EQ(idle.idle.host_ns, 9 * 10);
  EXPECT_EQ(idle.idle.launch_ns, 9 * 10);
  EXPECT_EQ(idle.idle.queued_ns, 9 * 2);
  Diagnosis d = diagnose_gpu_trace(b.t);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].rule, "gpu.launch_sync");
  EXPECT_NE(d.findings[0].evidence[0].find("synchronizing calls: 10 (1.00 per launch"),
            std::string::npos)
      << d.findings[0].evidence[0];
}

// The host launched everything ahead and synchronized once: the GPU's small
// gaps are queued work, not the host's doing, and no host rule fires.
TEST(GpuIdle, WorkQueuedAheadIsNotChargedToTheHost) {
  Builder b;
  std::vector<int64_t> correlations;
  for (int i = 0; i < 50; ++i) correlations.push_back(b.call(1, 2 * i, 2 * i + 1));
  b.call(2, 100, 2000);
  for (int i = 0; i < 50; ++i) b.kernel(correlations[i], 200 + 4 * i, 203 + 4 * i, 264);
  GpuIdle idle = gpu_idle(b.t);
  EXPECT_EQ(idle.idle.queued_ns, 49);
  EXPECT_EQ(idle.idle.host_side_ns(), 0);
  EXPECT_TRUE(diagnose_gpu_trace(b.t).findings.empty());
}

TEST(GpuIdle, OverlappingActivitiesAreBusyOnceAndUnknownIssuersAreNotGuessed) {
  Builder b;
  b.kernel(b.call(1, 0, 10), 10, 100);
  b.kernel(b.call(1, 10, 20), 50, 150);  // overlaps the first: busy [10, 150)
  b.kernel(999, 200, 210);               // no API call has correlation 999
  GpuIdle idle = gpu_idle(b.t);
  EXPECT_EQ(idle.busy_ns, 150);
  EXPECT_EQ(idle.gaps, 1);
  EXPECT_EQ(idle.idle.unattributed_ns, 50);
  EXPECT_EQ(idle.idle.host_ns + idle.idle.sync_ns + idle.idle.launch_ns, 0);
}

TEST(Diagnosis, ASyncAfterEveryLaunchIsTheFirstFinding) {
  Builder b;
  int64_t t = 0;
  for (int i = 0; i < 20; ++i) {  // launch 10, kernel 5, sync until it ends + 20
    b.kernel(b.call(1, t, t + 10), t + 12, t + 17, /*blocks=*/16);
    b.call(2, t + 10, t + 37);
    t += 40;
  }
  Diagnosis d = diagnose_gpu_trace(b.t);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].rule, "gpu.launch_sync");
  const std::string evidence = d.findings[0].evidence[0];
  EXPECT_NE(evidence.find("kernel launches: 20; synchronizing calls: 20 (1.00 per launch"),
            std::string::npos)
      << evidence;
  // The gain bound is what it accounts for: the idle time in the syncs and
  // what those gaps held after the wait (the next launch, the queue).
  EXPECT_EQ(d.findings[0].gain_ns, d.idle.idle.sync_ns + d.idle.idle.after_sync_ns);
  EXPECT_EQ(d.findings[0].gain_ns, d.idle.idle_ns()) << "every gap began with a sync";
  EXPECT_TRUE(std::any_of(d.findings.begin(), d.findings.end(),
                          [](const Finding& f) { return f.rule == "kernel.small_grid"; }));
}

TEST(Diagnosis, BackToBackKernelsOnAFullGridHaveNoFinding) {
  Builder b;
  for (int i = 0; i < 20; ++i) b.call(1, i, i + 1);
  for (int i = 0; i < 20; ++i) b.kernel(i + 1, 100 + 1000 * i, 100 + 1000 * (i + 1), 264);
  Diagnosis d = diagnose_gpu_trace(b.t);
  EXPECT_EQ(d.idle.busy_ns, d.idle.window_ns());
  EXPECT_TRUE(d.findings.empty());
}

// Few syncs, kernels shorter than their launches: launch-bound.
TEST(Diagnosis, KernelsShorterThanTheirLaunchesWithoutSyncs) {
  Builder b;
  for (int i = 0; i < 30; ++i)
    b.kernel(b.call(1, 20 * i, 20 * i + 18), 20 * i + 19, 20 * i + 21, 264);
  Diagnosis d = diagnose_gpu_trace(b.t);
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].rule, "gpu.launch_bound");
  EXPECT_NE(d.findings[0].cause.find("too short for their launches"), std::string::npos)
      << d.findings[0].cause;
}

// Damaged values (the trace reader is fed untrusted files): no finding from
// a zero-length window, no overflow from huge durations or grids.
TEST(Diagnosis, DamagedValuesGiveNoFindingAndNoOverflow) {
  Builder b;
  b.kernel(b.call(1, 0, 1), 5, 5, 16);
  b.kernel(b.call(1, 1, 2), 5, 5, 16);
  Diagnosis zero = diagnose_gpu_trace(b.t);
  EXPECT_TRUE(zero.findings.empty());

  Builder h;
  const int64_t big = INT64_MAX / 2;
  h.kernel(h.call(1, 0, 1), 10, big, 1);
  h.kernel(h.call(1, 1, 2), 11, big, 1);
  h.kernel(h.call(1, 2, 3), 12, big, 1);
  h.t.kernels.launch.grid[0] = {INT64_MAX, INT64_MAX, INT64_MAX};
  Diagnosis d = diagnose_gpu_trace(h.t);
  for (const auto& f : d.findings) {
    EXPECT_GE(f.gain_ns, 0) << f.rule;
    for (const auto& e : f.evidence) EXPECT_EQ(e.find('-'), std::string::npos) << e;
  }
}

store::GpuTables load_fixture(const std::string& name) {
  auto reader =
      store::TraceReader::open(std::string(STRATA_TEST_DATA) + "/" + name + "/trace.sqlite");
  EXPECT_TRUE(reader) << reader.error().message;
  store::GpuLoadOptions options;
  options.timeline = true;
  auto tables = store::load_gpu_tables(reader->handle(), reader->path(), options);
  EXPECT_TRUE(tables) << tables.error().message;
  return std::move(tables).value();
}

// The tutorial's Case 2 (shared/seed): the slow loop is launch/sync-bound,
// nsys shows the launches and syncs, ncu the 16-block grid on 132 SMs.
TEST(DiagnosisOnCaptures, SlowLoopIsLaunchSyncBoundWithASmallGrid) {
  Diagnosis d = diagnose_gpu_trace(load_fixture("trace-gpu_matmul-slow_loop_sync"));
  ASSERT_GE(d.findings.size(), 2u);
  EXPECT_EQ(d.findings[0].rule, "gpu.launch_sync");
  const std::string counts = d.findings[0].evidence[0];
  EXPECT_NE(counts.find("kernel launches: 129"), std::string::npos) << counts;
  EXPECT_NE(counts.find("cudaDeviceSynchronize x129"), std::string::npos) << counts;
  auto grid = std::find_if(d.findings.begin(), d.findings.end(),
                           [](const Finding& f) { return f.rule == "kernel.small_grid"; });
  ASSERT_NE(grid, d.findings.end());
  EXPECT_NE(grid->cause.find("16 blocks on a GPU with 132 SMs"), std::string::npos) << grid->cause;
  // Start-up is apart: context creation is its heaviest part.
  ASSERT_FALSE(d.startup_parts.empty());
  EXPECT_EQ(d.startup_parts[0].name, "cudaSetDevice");
  EXPECT_GT(d.startup_ns, d.idle.window_ns());
}

TEST(DiagnosisOnCaptures, BatchedHasNoLaunchSyncFinding) {
  Diagnosis d = diagnose_gpu_trace(load_fixture("trace-gpu_matmul-batched"));
  ASSERT_TRUE(d.idle.has_activity);
  for (const auto& f : d.findings) EXPECT_NE(f.rule, "gpu.launch_sync");
  EXPECT_GT(d.idle.busy_ns, d.idle.window_ns() / 2);
}

TEST(DiagnosisReport, JsonRowsCarryEvidenceAndTheCommandToShowItAgain) {
  auto tables = load_fixture("trace-gpu_matmul-slow_loop_sync");
  report::GpuReportOptions options;
  options.format = report::Format::kJson;
  report::GpuReport r = report::diagnosis_report_of(tables, "t.sqlite", options);
  ASSERT_FALSE(r.table.rows.empty());
  const std::string json = report::render_gpu_report(r, report::Format::kJson);
  EXPECT_EQ(r.table.columns.size(), 9u);
  EXPECT_NE(json.find("\"Rule\": \"gpu.launch_sync\""), std::string::npos) << json;
  EXPECT_NE(json.find("strata report t.sqlite --report cuda_api_sum,cuda_gpu_kern_sum"),
            std::string::npos)
      << json;
}

// The page's verdict (report::verdict_report) of a GPU capture: the
// sentence first, the work window and idle breakdown among the header lines,
// the timeline's findings as rows with the JSON columns.
TEST(DiagnosisReport, VerdictForThePageHasTheWindowAndTheFindings) {
  VerdictInput in;
  in.gpu = load_fixture("trace-gpu_matmul-slow_loop_sync");
  store::BenchRun run;
  run.wall_ns = 1'000'000'000;
  run.user_ns = 300'000'000;
  in.bench = {run};
  auto v = build_verdict(in);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->gpu.has_value());
  report::GpuReport r = report::verdict_report(*v, "t.sqlite");
  ASSERT_GE(r.header.size(), 3u);
  EXPECT_EQ(r.header[0].rfind("Verdict: gpu.launch_sync could save up to ", 0), 0u) << r.header[0];
  EXPECT_TRUE(std::any_of(r.header.begin(), r.header.end(), [](const std::string& h) {
    return h.rfind("Work window (first kernel to last GPU activity): ", 0) == 0;
  }));
  EXPECT_EQ(r.table.columns.size(), 9u);
  ASSERT_EQ(r.table.rows.size(), v->findings.size());
  EXPECT_EQ(r.table.rows[0][4].text, "gpu.launch_sync");
}

}  // namespace
}  // namespace strata::analysis
