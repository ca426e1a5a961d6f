// The multi-rank analysis on hand-built columns: every number worked out by
// hand. tests/gpu_reports/multi_rank_store_test.cc runs the same through
// real trace files.
#include "analysis/multi_rank.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

struct K {
  const char* name;
  int64_t start, end;
  int64_t device = 0;
};

RankInput rank_input(const std::string& source, std::optional<int64_t> rank,
                     std::initializer_list<K> kernels, int64_t shift = 0) {
  RankInput in;
  in.source = source;
  in.rank = rank;
  in.world_size = 2;
  in.host = "node0";
  in.boot_id = "boot-a";
  in.clock = ClockPair{1000 * kMs, 1'700'000'000'000 * kMs, 50};
  in.gpu.has_kernels = true;
  std::map<std::string, int64_t> ids;
  for (const K& k : kernels) {
    auto [it, added] = ids.emplace(k.name, static_cast<int64_t>(ids.size()));
    if (added) in.gpu.strings[it->second] = k.name;
    in.gpu.kernels.start.push_back(k.start + shift);
    in.gpu.kernels.end.push_back(k.end + shift);
    in.gpu.kernels.name_id.push_back(it->second);
    in.gpu.kernels.device_id.push_back(k.device);
    in.gpu.kernels.correlation_id.push_back(0);
    in.gpu.kernels.global_pid.push_back(0);
  }
  return in;
}

constexpr const char* kAr =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// Two ranks, three all-reduces; rank 1 sleeps 50 ms before the second.
std::vector<RankInput> planted_straggler(int64_t rank1_shift = 0) {
  std::vector<RankInput> v;
  v.push_back(rank_input("r0.sqlite", 0,
                         {{"gemm", 0, 1 * kMs},
                          {kAr, 1 * kMs, 1 * kMs + 500 * kUs},
                          {"gemm", 1 * kMs + 500 * kUs, 2 * kMs + 500 * kUs},
                          {kAr, 2 * kMs + 500 * kUs, 53 * kMs},
                          {"gemm", 53 * kMs, 54 * kMs},
                          {kAr, 54 * kMs, 54 * kMs + 500 * kUs}}));
  v.back().gpu.has_memcpy = true;
  v.back().gpu.memcpy.start = {-1 * kMs};
  v.back().gpu.memcpy.end = {-1 * kMs + 200 * kUs};
  v.back().gpu.memcpy.bytes = {4096};
  v.back().gpu.memcpy.copy_kind = {1};
  v.push_back(rank_input("r1.sqlite", 1,
                         {{"gemm", 0, 1 * kMs + 10 * kUs, 1},
                          {kAr, 1 * kMs + 10 * kUs, 1 * kMs + 500 * kUs, 1},
                          {"gemm", 1 * kMs + 500 * kUs, 2 * kMs + 500 * kUs, 1},
                          {kAr, 52 * kMs + 500 * kUs, 53 * kMs + 1 * kUs, 1},
                          {"gemm", 53 * kMs, 54 * kMs, 1},
                          {kAr, 54 * kMs + 2 * kUs, 54 * kMs + 500 * kUs, 1}},
                         rank1_shift));
  return v;
}

TEST(MultiRank, PerRankCountsTimesAndIdle) {
  auto inputs = planted_straggler();
  auto r = analyze_ranks(inputs);
  ASSERT_EQ(r.ranks.size(), 2u);
  const auto& r0 = r.ranks[0];
  EXPECT_EQ(r0.label, "0");
  EXPECT_EQ(r0.kernels, 6);
  EXPECT_EQ(r0.compute_kernels, 3);
  EXPECT_EQ(r0.communication_kernels, 3);
  EXPECT_EQ(r0.memops, 1);
  EXPECT_EQ(r0.compute_ns, 3 * kMs);
  EXPECT_EQ(r0.communication_ns, 500 * kUs + 50 * kMs + 500 * kUs + 500 * kUs);
  EXPECT_EQ(r0.memory_ns, 200 * kUs);
  // Busy: the memcpy, then 0 .. 54.5 ms without a gap; idle: -0.8 .. 0 ms.
  EXPECT_EQ(r0.span_ns, 55 * kMs + 500 * kUs);
  EXPECT_EQ(r0.busy_ns, 200 * kUs + 54 * kMs + 500 * kUs);
  EXPECT_EQ(r0.idle_ns, 800 * kUs);
  EXPECT_EQ(r0.devices, std::vector<int64_t>{0});
  const auto& r1 = r.ranks[1];
  EXPECT_EQ(r1.kernels, 6);
  EXPECT_EQ(r1.communication_kernels, 3);
  EXPECT_EQ(r1.devices, std::vector<int64_t>{1});
  // Rank 1 is idle while it sleeps: 2.5 .. 52.5 ms,
  EXPECT_EQ(r1.idle_ns, 50 * kMs + 2 * kUs);  // and 54.000 .. 54.002 ms
  EXPECT_EQ(r.clock.method, ClockMethod::kOneClock);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
}

TEST(MultiRank, NamesThePlantedStragglerWithItsDelay) {
  auto inputs = planted_straggler();
  auto r = analyze_ranks(inputs);
  ASSERT_EQ(r.collectives.size(), 3u);
  const auto& second = r.collectives[1];
  EXPECT_EQ(second.type, Collective::kAllReduce);
  EXPECT_EQ(second.index, 1);
  EXPECT_EQ(r.ranks[second.last].label, "1");
  EXPECT_EQ(r.ranks[second.first].label, "0");
  EXPECT_NEAR(static_cast<double>(second.delay_ns), 50.0 * kMs, 5.0 * kMs);
  EXPECT_EQ(second.delay_ns, 50 * kMs);
  EXPECT_EQ(second.mean_wait_ns, 50 * kMs);
  EXPECT_EQ(second.end_spread_ns, 1 * kUs);
  // The first and third: rank 1 10 us and 2 us late.
  EXPECT_EQ(r.collectives[0].delay_ns, 10 * kUs);
  EXPECT_EQ(r.collectives[2].delay_ns, 2 * kUs);
  ASSERT_TRUE(r.worst.has_value());
  EXPECT_EQ(r.ranks[*r.worst].label, "1");
  EXPECT_EQ(r.ranks[*r.worst].times_last, 3);
  EXPECT_EQ(r.ranks[*r.worst].delay_caused_ns, 50 * kMs + 12 * kUs);
  EXPECT_EQ(r.ranks[*r.worst].max_delay_ns, 50 * kMs);
  EXPECT_EQ(r.ranks[0].wait_ns, 50 * kMs + 12 * kUs);
  EXPECT_EQ(r.ranks[0].max_wait_ns, 50 * kMs);
  EXPECT_EQ(r.ranks[1].wait_ns, 0);
  EXPECT_EQ(r.total_wait_ns, 50 * kMs + 12 * kUs);
  EXPECT_EQ(r.max_wait_ns, 50 * kMs);
  EXPECT_EQ(r.origin_ns, -1 * kMs);
}

TEST(MultiRank, InputOrderDoesNotMatter) {
  auto inputs = planted_straggler();
  std::swap(inputs[0], inputs[1]);
  auto r = analyze_ranks(inputs);
  EXPECT_EQ(r.ranks[0].label, "0");
  EXPECT_EQ(r.ranks[0].input, 1u);
  EXPECT_EQ(r.ranks[r.collectives[1].last].label, "1");
}

TEST(MultiRank, TwoHostsAlignThroughTheClockPairs) {
  // Rank 1's host booted 777 s later: its CLOCK_MONOTONIC reads 777 s less
  // at the same moment, and its clock pair says so.
  auto inputs = planted_straggler(-777'000 * kMs);
  inputs[1].host = "node1";
  inputs[1].boot_id = "boot-b";
  inputs[1].clock = ClockPair{1000 * kMs - 777'000 * kMs, 1'700'000'000'000 * kMs, 70};
  auto r = analyze_ranks(inputs);
  EXPECT_EQ(r.clock.method, ClockMethod::kWallClock);
  EXPECT_EQ(r.clock.domains, 2u);
  EXPECT_EQ(r.clock.error_bound_ns, 120);
  ASSERT_EQ(r.collectives.size(), 3u);
  EXPECT_EQ(r.collectives[1].delay_ns, 50 * kMs);
  EXPECT_EQ(r.ranks[r.collectives[1].last].label, "1");
  EXPECT_EQ(r.end_spread_median_ns, 0);
  EXPECT_EQ(r.end_spread_max_ns, 1 * kUs);
}

TEST(MultiRank, SameHostNeedsNoClockPair) {
  auto inputs = planted_straggler();
  inputs[0].clock.reset();
  inputs[1].clock.reset();
  inputs[0].boot_id.clear();  // an older file: the host name decides
  auto r = analyze_ranks(inputs);
  EXPECT_EQ(r.clock.method, ClockMethod::kOneClock);
  EXPECT_EQ(r.collectives[1].delay_ns, 50 * kMs);
}

TEST(MultiRank, TwoHostsWithoutClockPairAreUnaligned) {
  auto inputs = planted_straggler();
  inputs[1].host = "node1";
  inputs[1].boot_id = "boot-b";
  inputs[1].clock.reset();
  auto r = analyze_ranks(inputs);
  EXPECT_EQ(r.clock.method, ClockMethod::kUnaligned);
  ASSERT_EQ(r.clock.unaligned_sources.size(), 1u);
  EXPECT_EQ(r.clock.unaligned_sources[0], "r1.sqlite");
}

TEST(MultiRank, DuplicatedRanksAreWarnedAndKeptApart) {
  auto inputs = planted_straggler();
  inputs[1].rank = 0;
  auto r = analyze_ranks(inputs);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].label, "0 (r0.sqlite)");
  EXPECT_EQ(r.ranks[1].label, "0 (r1.sqlite)");
  bool warned = false;
  for (const auto& w : r.warnings) warned |= w.find("rank 0 is in 2 files") != std::string::npos;
  EXPECT_TRUE(warned);
  // world size 2, rank 1 missing
  bool missing = false;
  for (const auto& w : r.warnings) missing |= w.find("no file of rank 1") != std::string::npos;
  EXPECT_TRUE(missing);
}

TEST(MultiRank, FilesWithoutRankComeLastByFileName) {
  auto inputs = planted_straggler();
  inputs[0].rank.reset();
  auto r = analyze_ranks(inputs);
  EXPECT_EQ(r.ranks[0].label, "1");
  EXPECT_EQ(r.ranks[1].label, "r0.sqlite");
  bool warned = false;
  for (const auto& w : r.warnings)
    warned |= w.find("r0.sqlite records no rank") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(MultiRank, DifferingCountsMatchTheFirstOnes) {
  auto inputs = planted_straggler();
  auto& k = inputs[1].gpu.kernels;
  for (auto* col : {&k.start, &k.end, &k.name_id, &k.device_id, &k.correlation_id, &k.global_pid}) {
    col->pop_back();
  }
  auto r = analyze_ranks(inputs);
  EXPECT_EQ(r.collectives.size(), 2u);
  bool warned = false;
  for (const auto& w : r.warnings) {
    warned |= w.find("AllReduce kernel counts differ between ranks (rank 0: 3, rank 1: 2)") !=
              std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(MultiRank, CollectiveTypesAreMatchedApart) {
  std::vector<RankInput> v;
  v.push_back(rank_input("a", 0,
                         {{"ncclDevKernel_AllGather_RING_LL", 0, 10},
                          {kAr, 20, 30},
                          {"ncclDevKernel_AllGather_RING_LL", 40, 50}}));
  v.push_back(rank_input("b", 1,
                         {{"ncclDevKernel_AllGather_RING_LL", 5, 10},
                          {"ncclDevKernel_AllGather_RING_LL", 41, 50},
                          {kAr, 28, 30}}));
  auto r = analyze_ranks(v);
  ASSERT_EQ(r.collectives.size(), 3u);
  EXPECT_EQ(r.collectives[0].type, Collective::kAllGather);
  EXPECT_EQ(r.collectives[0].delay_ns, 5);
  EXPECT_EQ(r.collectives[1].type, Collective::kAllReduce);
  EXPECT_EQ(r.collectives[1].delay_ns, 8);
  EXPECT_EQ(r.collectives[2].type, Collective::kAllGather);
  EXPECT_EQ(r.collectives[2].index, 1);
  EXPECT_EQ(r.collectives[2].delay_ns, 1);
}

TEST(MultiRank, NoGpuActivity) {
  std::vector<RankInput> v;
  v.push_back(rank_input("a", 0, {}));
  v.push_back(rank_input("b", 1, {{"gemm", 0, 10}}));
  auto r = analyze_ranks(v);
  EXPECT_EQ(r.ranks[0].span_ns, 0);
  EXPECT_EQ(r.ranks[0].idle_ns, 0);
  EXPECT_TRUE(r.collectives.empty());
  EXPECT_FALSE(r.worst.has_value());
  bool warned = false;
  for (const auto& w : r.warnings) warned |= w.find("a holds no kernels") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(MultiRank, OverlappingKernelsCountOnceInBusy) {
  std::vector<RankInput> v;
  v.push_back(rank_input("a", 0, {{"k1", 0, 100}, {"k2", 50, 150}, {"k3", 300, 400}}));
  v.push_back(rank_input("b", 1, {{"k1", 0, 10}}));
  auto r = analyze_ranks(v);
  EXPECT_EQ(r.ranks[0].busy_ns, 250);
  EXPECT_EQ(r.ranks[0].span_ns, 400);
  EXPECT_EQ(r.ranks[0].idle_ns, 150);
  EXPECT_EQ(r.ranks[0].compute_ns, 300);
}

}  // namespace
}  // namespace strata::analysis
