// Kernels mode: the kernel name table (kernels-seen counts and ordinals), the
// metric list per section, launch parameter decoding and the chunk's values.
#include <cuda_runtime_api.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "agent/config.h"
#include "agent/kernels/kernel_table.h"
#include "agent/kernels/launch_metrics.h"
#include "agent/kernels/launch_params.h"
#include "agent/kernels/metric_list.h"

namespace {

using namespace strata::agent::kernels;
using strata::agent::kSectionAll;
using strata::agent::kSectionLaunch;
using strata::agent::kSectionOccupancy;
using strata::agent::kSectionSol;
using strata::agent::kSectionWorkload;

TEST(KernelsTable, CountsLaunchesAndGivesPerNameOrdinals) {
  KernelTable table;
  ASSERT_TRUE(table.init());
  uint64_t ordinal = 99;
  ASSERT_NE(table.count_launch("_Z1av", &ordinal), nullptr);
  EXPECT_EQ(ordinal, 0u);
  table.count_launch("_Z1bv", &ordinal);
  EXPECT_EQ(ordinal, 0u);
  table.count_launch("_Z1av", &ordinal);
  EXPECT_EQ(ordinal, 1u);
  KernelTable::Entry* a = table.count_launch("_Z1av", &ordinal);
  EXPECT_EQ(ordinal, 2u);
  EXPECT_EQ(a->launches, 3u);
  a->match = KernelTable::Match::kYes;  // the cached filter answer stays
  EXPECT_EQ(table.count_launch("_Z1av", &ordinal)->match, KernelTable::Match::kYes);
  std::map<std::string, uint64_t> seen;
  table.for_each([&](const KernelTable::Entry& e) {
    seen[std::string(e.text, e.stored_length)] = e.launches;
  });
  EXPECT_EQ(seen, (std::map<std::string, uint64_t>{{"_Z1av", 4}, {"_Z1bv", 1}}));
}

TEST(KernelsTable, AFullTableCountsOverflowInsteadOfLosingEntries) {
  KernelTable table;
  ASSERT_TRUE(table.init(8, 1 << 16));  // 8 slots, 6 usable
  uint64_t ordinal = 0;
  for (int i = 0; i < 6; ++i) {
    ASSERT_NE(table.count_launch("kernel" + std::to_string(i), &ordinal), nullptr) << i;
  }
  EXPECT_EQ(table.size(), 6u);
  EXPECT_EQ(table.count_launch("one_too_many", &ordinal), nullptr);
  EXPECT_EQ(ordinal, KernelTable::kUnknownOrdinal);
  EXPECT_EQ(table.count_launch("one_too_many", &ordinal), nullptr);
  EXPECT_EQ(table.overflow_launches(), 2u);
  // Names already in still count.
  table.count_launch("kernel3", &ordinal);
  EXPECT_EQ(ordinal, 1u);
  EXPECT_EQ(table.size(), 6u);
}

TEST(KernelsTable, AFullArenaAndLongNamesAreHandled) {
  KernelTable table;
  ASSERT_TRUE(table.init(64, 100));
  uint64_t ordinal = 0;
  EXPECT_NE(table.count_launch(std::string(90, 'a'), &ordinal), nullptr);
  EXPECT_EQ(table.count_launch(std::string(20, 'b'), &ordinal), nullptr);  // 90 + 20 > 100
  EXPECT_EQ(table.overflow_launches(), 1u);

  KernelTable big;
  ASSERT_TRUE(big.init());
  std::string huge(KernelTable::kMaxStoredName + 500, 'x');
  std::string other = huge;
  other.back() = 'y';  // differs only past the stored prefix
  big.count_launch(huge, &ordinal);
  big.count_launch(other, &ordinal);
  EXPECT_EQ(ordinal, 0u) << "names that differ past the cut are two names";
  big.count_launch(huge, &ordinal);
  EXPECT_EQ(ordinal, 1u);
  big.for_each(
      [](const KernelTable::Entry& e) { EXPECT_EQ(e.stored_length, KernelTable::kMaxStoredName); });
}

std::set<std::string> names_of(const MetricList& list) {
  std::set<std::string> names(list.names, list.names + list.count);
  EXPECT_EQ(names.size(), list.count) << "a metric is listed twice";
  return names;
}

TEST(KernelsMetricList, EachSectionHasItsMetricsOnce) {
  std::set<std::string> sol = names_of(metrics_for_sections(kSectionSol));
  EXPECT_EQ(sol.size(), 10u);
  EXPECT_TRUE(sol.count("gpu__time_duration.sum"));
  EXPECT_TRUE(sol.count("sm__throughput.avg.pct_of_peak_sustained_elapsed"));
  std::set<std::string> workload = names_of(metrics_for_sections(kSectionWorkload));
  EXPECT_EQ(workload.size(), 10u);
  EXPECT_TRUE(workload.count("dram__cycles_elapsed.sum"));
  EXPECT_TRUE(workload.count("sm__cycles_active.avg"));
  std::set<std::string> occupancy = names_of(metrics_for_sections(kSectionOccupancy));
  EXPECT_EQ(occupancy, (std::set<std::string>{"sm__warps_active.avg.pct_of_peak_sustained_active",
                                              "sm__warps_active.avg.per_cycle_active"}));
  EXPECT_EQ(metrics_for_sections(kSectionLaunch).count, 0u);  // computed on the host
  // All of them: sm__cycles_active.avg shared by sol and workload, once.
  EXPECT_EQ(names_of(metrics_for_sections(kSectionAll)).size(), kSectionMetrics);
  EXPECT_EQ(metrics_for_sections(kSectionAll).count, 21u);
}

TEST(KernelsMetricList, ExtraMetricsFollowTheSectionsOnce) {
  // As Config::kernel_metrics holds them: each name ended by a NUL.
  const char extra[] = "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed\0"
                       "gpu__time_duration.sum\0"  // already a section's: not twice
                       "lts__t_tag_requests.sum";
  MetricList list = metrics_for_sections(kSectionSol, extra, 3);
  ASSERT_EQ(list.count, 12u);
  EXPECT_STREQ(list.names[10], "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed");
  EXPECT_STREQ(list.names[11], "lts__t_tag_requests.sum");
  // Only the extras: the launch section needs no counter.
  MetricList only = metrics_for_sections(kSectionLaunch, extra, 1);
  ASSERT_EQ(only.count, 1u);
  EXPECT_EQ(only.names[0], extra);  // points into the caller's storage
  // Every section and the most extras fit.
  std::string many;
  for (size_t i = 0; i < kMaxExtraMetrics + 2; ++i) many += "x__m" + std::to_string(i) + '\0';
  EXPECT_EQ(metrics_for_sections(kSectionAll, many.c_str(), kMaxExtraMetrics + 2).count,
            kMaxMetrics);
}

// The driver's parameter structs as CUPTI passes them (generated_cuda_meta.h).
struct FakeLaunchKernel {
  CUfunction f;
  unsigned gx, gy, gz, bx, by, bz, smem;
  CUstream stream;
  void** params;
  void** extra;
};

TEST(KernelsLaunchParams, DecodesDriverLaunches) {
  auto fake_function = reinterpret_cast<CUfunction>(0x1234);
  auto fake_stream = reinterpret_cast<CUstream>(0x5678);
  void* fake_args[2] = {};
  FakeLaunchKernel p{fake_function, 4, 2, 1, 128, 1, 1, 512, fake_stream, fake_args, nullptr};
  LaunchParams out;
  ASSERT_TRUE(
      decode_launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p, &out));
  EXPECT_EQ(out.api, LaunchApi::kDriver);
  EXPECT_EQ(out.grid[0], 4u);
  EXPECT_EQ(out.grid[1], 2u);
  EXPECT_EQ(out.block[0], 128u);
  EXPECT_EQ(out.dynamic_shared, 512u);
  EXPECT_EQ(out.stream, fake_stream);
  EXPECT_EQ(out.function, fake_function);
  EXPECT_EQ(out.kernel_params, fake_args);  // what strata's replay relaunches with
  EXPECT_FALSE(out.cooperative);
  EXPECT_FALSE(out.per_thread_stream);

  ASSERT_TRUE(decode_launch(CUPTI_CB_DOMAIN_DRIVER_API,
                            CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, &p, &out));
  EXPECT_EQ(out.api, LaunchApi::kCooperative);
  EXPECT_TRUE(out.cooperative);
  EXPECT_TRUE(out.per_thread_stream);

  CUlaunchAttribute attrs[2] = {};
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[0].value.clusterDim.x = 2;
  attrs[0].value.clusterDim.y = 1;
  attrs[0].value.clusterDim.z = 1;
  attrs[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attrs[1].value.cooperative = 1;
  CUlaunchConfig config{8, 1, 1, 64, 2, 1, 1024, fake_stream, attrs, 2};
  struct {
    const CUlaunchConfig* config;
    CUfunction f;
    void** params;
    void** extra;
  } ex{&config, fake_function, fake_args, nullptr};
  ASSERT_TRUE(decode_launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                            &ex, &out));
  EXPECT_EQ(out.api, LaunchApi::kDriverEx);
  EXPECT_EQ(out.grid[0], 8u);
  EXPECT_EQ(out.block[1], 2u);
  EXPECT_EQ(out.dynamic_shared, 1024u);
  EXPECT_EQ(out.cluster[0], 2u);
  EXPECT_TRUE(out.cooperative);
  EXPECT_EQ(out.function, fake_function);
  EXPECT_EQ(out.kernel_params, fake_args);
}

TEST(KernelsLaunchParams, DecodesRuntimeLaunches) {
  int stub = 0;
  void* fake_args[1] = {};
  cudaLaunchKernel_v7000_params_st p{&stub, dim3(3, 1, 1), dim3(32, 4, 1), nullptr, 64, nullptr};
  LaunchParams out;
  ASSERT_TRUE(decode_launch(CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &p, &out));
  EXPECT_EQ(out.api, LaunchApi::kRuntime);
  EXPECT_TRUE(out.runtime);
  EXPECT_EQ(out.grid[0], 3u);
  EXPECT_EQ(out.block[1], 4u);
  EXPECT_EQ(out.host_function, &stub);

  // nvcc 13's <<<>>>: __cudaLaunchKernel(cudaKernel_t, ...).
  struct {
    cudaKernel_t kernel;
    dim3 grid, block;
    void** args;
    size_t shared;
    cudaStream_t stream;
  } internal{
      reinterpret_cast<cudaKernel_t>(0x99), dim3(5, 6, 7), dim3(8, 1, 1), fake_args, 0, nullptr};
  ASSERT_TRUE(decode_launch(CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000, &internal,
                            &out));
  EXPECT_EQ(out.api, LaunchApi::kRuntime);
  EXPECT_EQ(out.grid[2], 7u);
  EXPECT_EQ(out.kernel, reinterpret_cast<CUkernel>(0x99));
  EXPECT_EQ(out.kernel_params, fake_args);
  EXPECT_TRUE(out.per_thread_stream);

  ASSERT_TRUE(decode_launch(CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, &p, &out));
  EXPECT_EQ(out.api, LaunchApi::kCooperative);
  EXPECT_TRUE(out.cooperative);

  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 4;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(16, 1, 1);
  config.blockDim = dim3(256, 1, 1);
  config.dynamicSmemBytes = 2048;
  config.attrs = &attr;
  config.numAttrs = 1;
  cudaLaunchKernelExC_v11060_params_st ex{&config, &stub, nullptr};
  ASSERT_TRUE(decode_launch(CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, &ex, &out));
  EXPECT_EQ(out.grid[0], 16u);
  EXPECT_EQ(out.dynamic_shared, 2048u);
  EXPECT_EQ(out.cluster[0], 4u);
  EXPECT_FALSE(out.cooperative);
}

TEST(KernelsLaunchParams, ClassifiesGraphsAndIgnoresOtherCalls) {
  EXPECT_EQ(classify(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000),
            CallbackKind::kGraphLaunch);
  EXPECT_EQ(classify(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch),
            CallbackKind::kGraphLaunch);
  EXPECT_EQ(classify(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020),
            CallbackKind::kOther);
  LaunchParams out;
  int dummy = 0;
  EXPECT_FALSE(decode_launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
                             &dummy, &out));
  EXPECT_FALSE(decode_launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                             nullptr, &out));
  // Every enabled callback is one the profiler handles.
  for (const LaunchCallback& launch : launch_callbacks()) {
    EXPECT_NE(classify(launch.domain, launch.cbid), CallbackKind::kOther);
  }
}

// The one table: each launch entry decodes (a zeroed struct: null handles
// and config pointers) with its own _ptsz flag; graph launches do not decode.
TEST(KernelsLaunchParams, EveryEnabledCallbackDecodesAsItsTableSays) {
  alignas(16) unsigned char zeros[256] = {};
  for (const LaunchCallback& launch : launch_callbacks()) {
    LaunchParams out;
    const bool is_launch = launch.kind == CallbackKind::kLaunch;
    EXPECT_EQ(decode_launch(launch.domain, launch.cbid, zeros, &out), is_launch) << launch.cbid;
    if (!is_launch) continue;
    EXPECT_EQ(out.per_thread_stream, launch.per_thread_stream) << launch.cbid;
    EXPECT_EQ(out.runtime, launch.domain == CUPTI_CB_DOMAIN_RUNTIME_API) << launch.cbid;
    EXPECT_NE(out.api, LaunchApi::kNone) << launch.cbid;
  }
}

std::map<std::string, double> values_of(const strata::format::MetricValue* m, size_t n) {
  std::map<std::string, double> out;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(out.count(std::string(m[i].name)), 0u) << m[i].name;
    out[std::string(m[i].name)] = m[i].value;
  }
  return out;
}

TEST(KernelsLaunchMetrics, LaunchAndDeviceValuesWithAndWithoutCounters) {
  MetricList list = metrics_for_sections(kSectionOccupancy);
  double counters[2] = {37.5, 24.0};
  LaunchFacts facts;
  facts.params.api = LaunchApi::kDriverEx;
  facts.params.grid[0] = 100, facts.params.grid[1] = 2, facts.params.grid[2] = 1;
  facts.params.block[0] = 64, facts.params.block[1] = 1, facts.params.block[2] = 1;
  facts.params.dynamic_shared = 6528;
  facts.function = {true, 80, 256};
  facts.stream_known = true;
  facts.stream_id = 7;
  facts.context_id = 1;
  DeviceAttributes device;
  device.known[0] = true;
  device.values[0] = 132;
  strata::format::MetricValue out[kMaxChunkMetrics];
  size_t n = build_launch_metrics(list, counters, facts, device, out, kMaxChunkMetrics);
  auto v = values_of(out, n);
  EXPECT_EQ(v["sm__warps_active.avg.pct_of_peak_sustained_active"], 37.5);
  EXPECT_EQ(v["launch__grid_size"], 200);
  EXPECT_EQ(v["launch__block_size"], 64);
  EXPECT_EQ(v["launch__thread_count"], 12800);
  EXPECT_EQ(v["launch__registers_per_thread"], 80);
  EXPECT_EQ(v["launch__shared_mem_per_block_static"], 256);
  EXPECT_EQ(v["launch__shared_mem_per_block_dynamic"], 6528);
  EXPECT_EQ(v["launch__api"], 3);
  EXPECT_EQ(v["launch__stream_id"], 7);
  EXPECT_EQ(v["launch__cooperative"], 0);
  EXPECT_EQ(v["device__attribute_multiprocessor_count"], 132);
  EXPECT_EQ(v.count("device__attribute_warp_size"), 0u) << "unknown attributes are left out";
  EXPECT_EQ(v.count("launch__cluster_dim_x"), 0u) << "no cluster set";
  EXPECT_EQ(v.count("launch__shared_mem_config_size"), 0u) << "no kernel record: unknown";

  // Every value there is at once (a cluster, the kernel record's carveout)
  // fits the chunk's capacity, with every device attribute.
  facts.params.cluster[0] = 2, facts.params.cluster[1] = 1, facts.params.cluster[2] = 1;
  facts.smem_config_bytes = 135168;
  for (int i = 0; i < kDeviceAttributeCount; ++i) device.known[i] = true;
  n = build_launch_metrics(list, counters, facts, device, out, kMaxChunkMetrics);
  v = values_of(out, n);
  EXPECT_EQ(v["launch__shared_mem_config_size"], 135168);
  EXPECT_EQ(v["launch__cluster_dim_x"], 2);
  EXPECT_EQ(v.count("device__attribute_warp_size"), 1u) << "the last value still fits";
  EXPECT_LT(n, kMaxChunkMetrics);

  // Registers as allocated: a kernel compiled to 8 runs with 16.
  facts.function.registers_per_thread = 8;
  v = values_of(out, build_launch_metrics(list, counters, facts, device, out, kMaxChunkMetrics));
  EXPECT_EQ(v["launch__registers_per_thread"], 16);

  // A failed collection: the launch values only.
  n = build_launch_metrics(list, nullptr, facts, device, out, kMaxChunkMetrics);
  v = values_of(out, n);
  EXPECT_EQ(v.count("sm__warps_active.avg.pct_of_peak_sustained_active"), 0u);
  EXPECT_EQ(v["launch__grid_dim_x"], 100);
  // Capacity is respected.
  EXPECT_EQ(build_launch_metrics(list, counters, facts, device, out, 3), 3u);
}

}  // namespace
