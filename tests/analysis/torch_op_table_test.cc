// analysis::torch_op_table on synthetic rows: each rule of torch's
// key_averages() (profiler_util.py) that the table reproduces.
#include "analysis/torch_op_table.h"

#include <gtest/gtest.h>

#include "common/global_id.h"

namespace strata::analysis {
namespace {

constexpr int64_t kPid = 100;
const int64_t kMain = global_id::make_tid(kPid, 100);
const int64_t kBackward = global_id::make_tid(kPid, 101);
const int64_t kProcess = global_id::make_pid(kPid);

store::TorchOp op(const std::string& name, int64_t start, int64_t end, int64_t tid = kMain,
                  int64_t external = 0) {
  store::TorchOp o;
  o.name = name;
  o.start = start;
  o.end = end;
  o.global_tid = tid;
  o.external_id = external;
  return o;
}

// A launch call (runtime row) and its kernel, linked to the op whose
// external id is `external` (0: no external correlation record).
void launch(store::TorchOpRows& rows, int64_t correlation, int64_t external, int64_t call_start,
            int64_t call_end, int64_t kernel_ns, const std::string& kernel = "gemm") {
  rows.runtime.push_back({call_start, call_end, kMain, correlation, "cudaLaunchKernel"});
  rows.device.push_back(
      {call_end + 1000, call_end + 1000 + kernel_ns, kProcess, correlation, kernel});
  if (external != 0) rows.correlations.push_back({kProcess, 3, external, correlation});
}

const TorchOpTableRow* row(const TorchOpTable& t, const std::string& name) {
  for (const auto& r : t.rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TorchOpTable table(const store::TorchOpRows& rows, TorchOpTableOptions options = {}) {
  auto t = torch_op_table(rows, options);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return t ? *t : TorchOpTable{};
}

TEST(TorchOpTable, SelfCpuExcludesDirectChildrenAndRuntimeCalls) {
  store::TorchOpRows rows;
  rows.ops = {op("aten::linear", 0, 1000), op("aten::addmm", 100, 900, kMain, 7)};
  launch(rows, 1, 7, 200, 500, 50);
  TorchOpTable t = table(rows);
  const auto* linear = row(t, "aten::linear");
  const auto* addmm = row(t, "aten::addmm");
  const auto* call = row(t, "cudaLaunchKernel");
  ASSERT_TRUE(linear && addmm && call);
  EXPECT_EQ(linear->self_cpu_ns, 200);  // 1000 - addmm's 800
  EXPECT_EQ(linear->cpu_total_ns, 1000);
  EXPECT_EQ(addmm->self_cpu_ns, 500);  // 800 - the launch call's 300
  EXPECT_EQ(call->self_cpu_ns, 300);
  EXPECT_EQ(t.self_cpu_total_ns, 1000);  // the sum of self CPU = the top-level op
}

TEST(TorchOpTable, KernelGoesToTheOpOfItsExternalIdNotTheOneAroundIt) {
  store::TorchOpRows rows;
  // The kernel's launch lies inside aten::copy_'s time, but its correlation
  // record names aten::mm's external id: the link is exact, not by time.
  rows.ops = {op("aten::mm", 0, 100, kMain, 1), op("aten::copy_", 200, 600, kMain, 2)};
  launch(rows, 9, 1, 300, 400, 70);
  TorchOpTable t = table(rows);
  EXPECT_EQ(row(t, "aten::mm")->self_cuda_ns, 70);
  EXPECT_EQ(row(t, "aten::copy_")->self_cuda_ns, 0);
  EXPECT_EQ(row(t, "aten::copy_")->cuda_total_ns, 0);
  EXPECT_EQ(t.unlinked_device, 0);
}

TEST(TorchOpTable, CudaTotalAddsDescendantsAndDeviceRowsCountInTheTotal) {
  store::TorchOpRows rows;
  rows.ops = {op("ProfilerStep", 0, 10000), op("aten::linear", 100, 5000, kMain, 1),
              op("aten::addmm", 200, 4000, kMain, 2)};
  launch(rows, 1, 2, 300, 400, 60, "gemm");
  launch(rows, 2, 1, 4100, 4200, 40, "bias");
  launch(rows, 3, 0, 6000, 6100, 25, "orphan");  // no op's id
  TorchOpTable t = table(rows);
  EXPECT_EQ(row(t, "aten::addmm")->self_cuda_ns, 60);
  EXPECT_EQ(row(t, "aten::linear")->self_cuda_ns, 40);
  EXPECT_EQ(row(t, "aten::linear")->cuda_total_ns, 100);
  EXPECT_EQ(row(t, "ProfilerStep")->self_cuda_ns, 0);
  EXPECT_EQ(row(t, "ProfilerStep")->cuda_total_ns, 100);
  const auto* gemm = row(t, "gemm");
  ASSERT_TRUE(gemm);
  EXPECT_TRUE(gemm->device);
  EXPECT_EQ(gemm->self_cuda_ns, 60);
  EXPECT_EQ(gemm->cuda_total_ns, 60);
  EXPECT_EQ(gemm->cpu_total_ns, 0);
  EXPECT_EQ(t.self_cuda_total_ns, 125);  // every device row, the orphan included
  EXPECT_EQ(t.unlinked_device, 1);
}

TEST(TorchOpTable, RecordFunctionScopesGetAGpuAnnotationRowOutsideTheCudaTotal) {
  store::TorchOpRows rows;
  store::TorchOp scope = op("slow_loop_sync_iteration", 0, 10000);
  scope.scope = 7;
  rows.ops = {scope, op("aten::mm", 100, 5000, kMain, 1)};
  launch(rows, 1, 1, 200, 300, 40);     // kernel [1300, 1340]
  launch(rows, 2, 1, 400, 500, 60);     // kernel [1500, 1560]
  launch(rows, 3, 0, 20000, 20100, 5);  // outside every op: no annotation
  TorchOpTable t = table(rows);
  const TorchOpTableRow* cpu = nullptr;
  const TorchOpTableRow* gpu = nullptr;
  for (const auto& r : t.rows) {
    if (r.name == "slow_loop_sync_iteration") (r.device ? gpu : cpu) = &r;
  }
  ASSERT_TRUE(cpu && gpu);
  EXPECT_TRUE(gpu->annotation);
  EXPECT_EQ(gpu->calls, 1);
  EXPECT_EQ(gpu->self_cuda_ns, 260);  // first kernel start to last kernel end
  EXPECT_EQ(gpu->cpu_total_ns, 0);
  EXPECT_EQ(cpu->cuda_total_ns, 100);
  EXPECT_EQ(cpu->self_cuda_ns, 0);
  EXPECT_EQ(t.self_cuda_total_ns, 105);  // kernels only, not the annotation
}

TEST(TorchOpTable, CorrelationsOfOtherProcessesOrKindsDoNotLink) {
  store::TorchOpRows rows;
  rows.ops = {op("aten::mm", 0, 1000, kMain, 5)};
  launch(rows, 1, 0, 100, 200, 10);
  rows.correlations.push_back({global_id::make_pid(kPid + 1), 3, 5, 1});  // another process
  rows.correlations.push_back({kProcess, 4, 5, 1});                       // CUSTOM1, not ours
  TorchOpTable t = table(rows);
  EXPECT_EQ(row(t, "aten::mm")->self_cuda_ns, 0);
  EXPECT_EQ(t.unlinked_device, 1);
}

TEST(TorchOpTable, OnlyChildWithItsParentsNameIsMerged) {
  store::TorchOpRows rows;
  rows.ops = {op("aten::to", 0, 1000, kMain, 1), op("aten::to", 100, 900, kMain, 2),
              op("aten::_to_copy", 200, 800, kMain, 3)};
  launch(rows, 1, 2, 300, 400, 30);
  TorchOpTable t = table(rows);
  const auto* to = row(t, "aten::to");
  ASSERT_TRUE(to);
  EXPECT_EQ(to->calls, 1);  // the inner aten::to is merged into the outer
  EXPECT_EQ(to->cpu_total_ns, 1000);
  EXPECT_EQ(to->self_cpu_ns, 400);  // 1000 - _to_copy's 600 (the merged node's child)
  EXPECT_EQ(to->self_cuda_ns, 30);  // the merged node's kernels are lifted
  // Two children: no merge.
  store::TorchOpRows two;
  two.ops = {op("aten::to", 0, 1000), op("aten::to", 100, 400), op("aten::to", 500, 900)};
  EXPECT_EQ(row(table(two), "aten::to")->calls, 3);
}

TEST(TorchOpTable, ThreadsAreSeparateTrees) {
  store::TorchOpRows rows;
  rows.ops = {op("outer", 0, 1000, kMain), op("inner", 100, 200, kBackward)};
  TorchOpTable t = table(rows);
  EXPECT_EQ(row(t, "outer")->self_cpu_ns, 1000);  // inner ran on another thread
  EXPECT_EQ(t.self_cpu_total_ns, 1100);
}

TEST(TorchOpTable, SortsByTorchsKeysAndLimits) {
  store::TorchOpRows rows;
  rows.ops = {op("a", 0, 100), op("b", 200, 500), op("b", 600, 700), op("c", 800, 1000)};
  TorchOpTableOptions o;
  o.sort = TorchSort::kCount;
  TorchOpTable t = table(rows, o);
  EXPECT_EQ(t.rows[0].name, "b");
  o.sort = TorchSort::kSelfCpu;
  o.limit = 2;
  t = table(rows, o);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].name, "b");       // 400
  EXPECT_EQ(t.rows[1].name, "c");       // 200
  EXPECT_EQ(t.self_cpu_total_ns, 700);  // totals count every row, not the kept ones
}

TEST(TorchOpTable, ParsesTorchSortNamesAndAliases) {
  EXPECT_EQ(*parse_torch_sort("self_cuda_time_total"), TorchSort::kSelfCuda);
  EXPECT_EQ(*parse_torch_sort("cuda_time_total"), TorchSort::kCudaTotal);
  EXPECT_EQ(*parse_torch_sort("cpu_time_total"), TorchSort::kCpuTotal);
  EXPECT_EQ(*parse_torch_sort("self_cpu_time_total"), TorchSort::kSelfCpu);
  EXPECT_EQ(*parse_torch_sort("count"), TorchSort::kCount);
  EXPECT_EQ(*parse_torch_sort("self_gpu"), TorchSort::kSelfCuda);
  EXPECT_FALSE(parse_torch_sort("bogus"));
}

TEST(TorchOpTable, GroupByShapeNeedsShapesAndSplitsRows) {
  store::TorchOpRows rows;
  rows.ops = {op("aten::mm", 0, 100), op("aten::mm", 200, 300)};
  TorchOpTableOptions o;
  o.group_by_shape = true;
  EXPECT_FALSE(torch_op_table(rows, o));
  rows.ops[0].shapes = "[[8, 16], [16, 4]]";
  rows.ops[1].shapes = "[[2, 2], [2, 2]]";
  TorchOpTable t = table(rows, o);
  EXPECT_EQ(t.rows.size(), 2u);
  EXPECT_TRUE(t.shapes_column);
  EXPECT_EQ(table(rows).rows.size(), 1u);  // without the option: one row per name
}

TEST(TorchOpTable, GroupByStackUsesFilteredFramesAndBackwardTakesForwardStack) {
  store::TorchOpRows rows;
  store::TorchOp fwd = op("aten::mm", 0, 100);
  fwd.seq = 4;
  fwd.stack = "torch/autograd/__init__.py(10): backward\ntrain.py(12): step\ntrain.py(30): main";
  store::TorchOp other = op("aten::mm", 200, 300);
  other.stack = "train.py(14): step\ntrain.py(30): main";
  store::TorchOp bw = op("MmBackward0", 400, 600, kBackward);
  bw.scope = 1;
  bw.seq = 4;
  store::TorchOp bw_child = op("aten::mm", 450, 550, kBackward);
  rows.ops = {fwd, other, bw, bw_child};
  TorchOpTableOptions o;
  o.group_by_stack = 1;
  TorchOpTable t = table(rows, o);
  int mm_rows = 0;
  for (const auto& r : t.rows) {
    if (r.name == "aten::mm") {
      ++mm_rows;
      ASSERT_EQ(r.stack.size(), 1u);
      // The autograd frame is filtered; the backward thread's mm has the
      // forward's stack, so it shares the forward's row.
      if (r.stack[0] == "train.py(12): step") {
        EXPECT_EQ(r.calls, 2);
      }
    }
    if (r.name == "MmBackward0") {
      EXPECT_EQ(r.stack, std::vector<std::string>{"train.py(12): step"});
    }
  }
  EXPECT_EQ(mm_rows, 2);
  store::TorchOpRows bare;
  bare.ops = {op("x", 0, 1)};
  EXPECT_FALSE(torch_op_table(bare, o));
  EXPECT_FALSE(keep_stack_entry("lib/torch/_tensor.py(1): backward torch/tensor"));
}

TEST(TorchOpTable, CpuOnlyHasNoCudaTime) {
  store::TorchOpRows rows;
  rows.ops = {op("aten::add", 0, 100), op("aten::add", 200, 250)};
  TorchOpTable t = table(rows);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].calls, 2);
  EXPECT_EQ(t.rows[0].cpu_total_ns, 150);
  EXPECT_EQ(t.self_cuda_total_ns, 0);
}

}  // namespace
}  // namespace strata::analysis
