// The kernels-mode agent on a GPU (ctest label `gpu`; SKIPPED without a
// device): kernels_prog runs with the agent injected in kernels mode, set up
// by environment variables alone (no CLI), and its spool must hold one
// kernel-metrics chunk per selected launch with sane values, and the
// kernels-seen counts of every launch. Set STRATA_AGENT_DEBUG=1 to see each
// CUPTI call the agent makes; STRATA_KEEP_RUN_DIR=1 keeps the spool.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "format/payloads.h"
#include "format/spool_reader.h"
#include "run_command.h"

namespace {

using strata::format::ChunkKind;

struct Launch {  // one kernel-metrics chunk, copied out of the spool
  std::string name;
  uint32_t device = 0, status = 0;
  uint64_t correlation = 0, invocation = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::map<std::string, double> metrics;
  double at(const std::string& metric) const {
    auto it = metrics.find(metric);
    return it == metrics.end() ? -1.0 : it->second;
  }
};

struct Profiled {
  examples_test::CommandResult result;
  std::vector<Launch> launches;
  std::map<std::string, uint64_t> seen;  // per name, the latest count
  int spools = 0;
  bool intact = false;
};

const char* kEnvNames[] = {"STRATA_RUN_DIR",
                           "CUDA_INJECTION64_PATH",
                           "STRATA_AGENT_MODE",
                           "STRATA_KERNEL_NAME",
                           "STRATA_KERNEL_SKIP",
                           "STRATA_KERNEL_COUNT",
                           "STRATA_AGENT_KERNELS_FAIL",
                           "STRATA_KERNEL_METRICS",
                           "STRATA_KERNEL_CACHE_CONTROL",
                           "STRATA_AGENT_DEBUG"};

Profiled run_profiled(const std::map<std::string, std::string>& env,
                      const std::vector<std::string>& args = {}) {
  std::string pattern = (std::filesystem::temp_directory_path() / "strata-kernels-XXXXXX").string();
  std::string dir = mkdtemp(pattern.data());
  setenv("STRATA_RUN_DIR", dir.c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", AGENT_LIB, 1);
  setenv("STRATA_AGENT_MODE", "kernels", 1);
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  Profiled p;
  std::vector<std::string> argv = {KERNELS_PROG};
  argv.insert(argv.end(), args.begin(), args.end());
  p.result = examples_test::run_command(argv);
  for (const char* name : kEnvNames) unsetenv(name);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++p.spools;
    auto reader = strata::format::SpoolReader::open(entry.path().string());
    EXPECT_TRUE(reader) << (reader ? "" : reader.error().message);
    if (!reader) continue;
    strata::format::Chunk chunk;
    while (reader->next(&chunk)) {
      if (chunk.kind == ChunkKind::kKernelMetrics) {
        auto decoded = strata::format::decode_kernel_metrics(chunk.payload);
        EXPECT_TRUE(decoded) << (decoded ? "" : decoded.error().message);
        if (!decoded) continue;
        Launch l;
        l.name = std::string(decoded->kernel_name);
        l.device = decoded->header.device;
        l.status = decoded->header.status;
        l.correlation = decoded->header.correlation_id;
        l.invocation = decoded->header.invocation;
        l.start_ns = decoded->header.start_ns;
        l.end_ns = decoded->header.end_ns;
        for (const auto& m : decoded->metrics) l.metrics[std::string(m.name)] = m.value;
        p.launches.push_back(std::move(l));
      } else if (chunk.kind == ChunkKind::kKernelsSeen) {
        auto decoded = strata::format::decode_kernels_seen(chunk.payload);
        EXPECT_TRUE(decoded) << (decoded ? "" : decoded.error().message);
        if (!decoded) continue;
        for (const auto& s : *decoded) p.seen[std::string(s.name)] = s.launches;
      }
    }
    p.intact = reader->stats().intact();
  }
  if (getenv("STRATA_KEEP_RUN_DIR") == nullptr) {
    std::filesystem::remove_all(dir);
  } else {
    std::fprintf(stderr, "spool kept in %s\n", dir.c_str());
  }
  return p;
}

// The mangled names of kernels_prog.cu's kernels contain their base names.
const Launch* find(const Profiled& p, const std::string& part, uint64_t invocation) {
  for (const Launch& l : p.launches) {
    if (l.name.find(part) != std::string::npos && l.invocation == invocation) return &l;
  }
  return nullptr;
}

uint64_t seen(const Profiled& p, const std::string& part) {
  for (const auto& [name, count] : p.seen) {
    if (name.find(part) != std::string::npos) return count;
  }
  return 0;
}

void expect_launch(const Launch* l, const char* what, double grid, double block, double api) {
  ASSERT_NE(l, nullptr) << what << " has no kernel-metrics chunk";
  SCOPED_TRACE(what);
  EXPECT_EQ(l->status, 0u) << "CUPTI status " << l->status << " (see the agent's stderr above)";
  EXPECT_GT(l->at("gpu__time_duration.sum"), 0.0);
  EXPECT_GT(l->at("gpc__cycles_elapsed.max"), 0.0);
  EXPECT_GT(l->at("sm__cycles_active.avg"), 0.0);
  EXPECT_GE(l->at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 0.0);
  EXPECT_LE(l->at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 100.5);
  EXPECT_GE(l->at("sm__warps_active.avg.pct_of_peak_sustained_active"), 0.0);
  EXPECT_GT(l->at("dram__cycles_elapsed.avg.per_second"), 0.0);
  EXPECT_EQ(l->at("launch__grid_size"), grid);
  EXPECT_EQ(l->at("launch__block_size"), block);
  EXPECT_EQ(l->at("launch__thread_count"), grid * block);
  EXPECT_EQ(l->at("launch__api"), api);
  EXPECT_GT(l->at("launch__registers_per_thread"), 0.0) << "registers unresolved";
  EXPECT_GT(l->at("device__attribute_multiprocessor_count"), 0.0);
  EXPECT_GE(l->at("device__attribute_compute_capability_major"), 7.0);
  EXPECT_EQ(l->at("device__attribute_warp_size"), 32.0);
  EXPECT_GT(l->correlation, 0u);
  EXPECT_GT(l->start_ns, 0);
  EXPECT_LE(l->start_ns, l->end_ns);
}

TEST(KernelsAgentGpu, ProfilesTheSelectedLaunchOfEachApi) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Profiled p = run_profiled({{"STRATA_KERNEL_NAME", "regex:^(scale|driver|driver_ex|coop)_kernel$"},
                             {"STRATA_KERNEL_SKIP", "1"},
                             {"STRATA_KERNEL_COUNT", "5"}});
  ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
  EXPECT_NE(p.result.out.find("ok"), std::string::npos);
  ASSERT_EQ(p.spools, 1) << p.result.err;
  EXPECT_TRUE(p.intact);
  // Matching launches in order: scale x3, driver, driver_ex, coop; the first
  // is skipped, the next five profiled.
  bool cooperative = p.result.err.find("cannot launch cooperative") == std::string::npos;
  EXPECT_EQ(p.launches.size(), cooperative ? 5u : 4u) << p.result.err;
  EXPECT_EQ(find(p, "scale_kernel", 0), nullptr) << "the skipped launch was profiled";
  expect_launch(find(p, "scale_kernel", 1), "scale_kernel <<<>>> #1", 7, 128, 1);
  expect_launch(find(p, "scale_kernel", 2), "scale_kernel <<<>>> #2", 7, 128, 1);
  expect_launch(find(p, "driver_kernel", 0), "cuLaunchKernel", 6, 64, 2);
  const Launch* ex = find(p, "driver_ex_kernel", 0);
  expect_launch(ex, "cuLaunchKernelEx", 5, 96, 3);
  if (ex != nullptr) {
    EXPECT_EQ(ex->at("launch__shared_mem_per_block_dynamic"), 384.0);
  }
  const Launch* driver = find(p, "driver_kernel", 0);
  if (driver != nullptr) {
    EXPECT_EQ(driver->at("launch__grid_dim_x"), 3.0);
    EXPECT_EQ(driver->at("launch__grid_dim_y"), 2.0);
  }
  if (cooperative) {
    const Launch* coop = find(p, "coop_kernel", 0);
    expect_launch(coop, "cudaLaunchCooperativeKernel", 2, 32, 4);
    if (coop != nullptr) {
      EXPECT_EQ(coop->at("launch__cooperative"), 1.0);
    }
  }
  for (const Launch& l : p.launches) {
    EXPECT_EQ(l.name.find("other_kernel"), std::string::npos)
        << "a non-matching launch was profiled";
  }
  // Every launch counted once, matching or not; graph kernels are not.
  EXPECT_EQ(seen(p, "scale_kernel"), 3u);
  EXPECT_EQ(seen(p, "other_kernel"), 2u);
  EXPECT_EQ(seen(p, "driver_kernel"), 1u);
  EXPECT_EQ(seen(p, "driver_ex_kernel"), 1u);
  EXPECT_EQ(seen(p, "graph_kernel"), 0u);
  EXPECT_NE(p.result.err.find("kernels inside graphs are not profiled"), std::string::npos)
      << p.result.err;
}

// strata's replay (--cache-control all) must run the kernel as compiled, as
// CUPTI's kernel replay (none) and ncu do: the same instructions and warps.
// CUPTI's kernel records instrument the kernels they time, 8 instructions
// more per warp on the H200, so the passes run without them (executed_config.h).
TEST(KernelsAgentGpu, ReplayRunsTheKernelAsCompiled) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  std::map<std::string, double> instructions, warps;
  for (const char* cache : {"all", "none"}) {
    SCOPED_TRACE(cache);
    Profiled p =
        run_profiled({{"STRATA_KERNEL_NAME", "regex:^scale_kernel$"},
                      {"STRATA_KERNEL_SKIP", "1"},
                      {"STRATA_KERNEL_COUNT", "1"},
                      {"STRATA_KERNEL_METRICS", "sm__inst_executed.sum,smsp__warps_launched.sum"},
                      {"STRATA_KERNEL_CACHE_CONTROL", cache}});
    ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
    const Launch* l = find(p, "scale_kernel", 1);
    ASSERT_NE(l, nullptr) << p.result.err;
    ASSERT_EQ(l->status, 0u) << p.result.err;
    EXPECT_GT(l->at("launch__registers_per_thread"), 0.0) << "registers unresolved";
    instructions[cache] = l->at("sm__inst_executed.sum");
    warps[cache] = l->at("smsp__warps_launched.sum");
  }
  EXPECT_EQ(warps["all"], 7.0 * 128 / 32);
  EXPECT_EQ(warps["all"], warps["none"]);
  EXPECT_GT(instructions["none"], 0.0);
  EXPECT_EQ(instructions["all"], instructions["none"])
      << "strata's replay ran " << (instructions["all"] - instructions["none"]) / warps["all"]
      << " more instructions per warp than CUPTI's kernel replay";
}

// Kernel records instrument the kernels they time, so in strata's replay
// they are on for its one recorded relaunch alone (executed_config.h): the
// program's launches before the profiled one (two or five), its own launch
// and the passes leave no record. The agent's debug line counts the records
// its flush delivered. A runtime and a driver launch each got their
// registers from that one record.
TEST(KernelsAgentGpu, OnlyTheRecordedRelaunchLeavesAKernelRecord) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  struct Pick {
    const char* kernel;
    const char* skip;  // the third scale_kernel, the only driver_kernel
  };
  for (const Pick& pick : {Pick{"scale_kernel", "2"}, Pick{"driver_kernel", "0"}}) {
    SCOPED_TRACE(pick.kernel);
    Profiled p = run_profiled({{"STRATA_KERNEL_NAME", std::string("regex:^") + pick.kernel + "$"},
                               {"STRATA_KERNEL_SKIP", pick.skip},
                               {"STRATA_KERNEL_COUNT", "1"},
                               {"STRATA_AGENT_DEBUG", "1"}});
    ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
    ASSERT_EQ(p.launches.size(), 1u) << p.result.err;
    EXPECT_EQ(p.launches[0].status, 0u) << p.result.err;
    EXPECT_NE(p.result.err.find("recorded relaunch: yes"), std::string::npos) << p.result.err;
    EXPECT_NE(p.result.err.find(", 1 records, correlation"), std::string::npos) << p.result.err;
    EXPECT_NE(p.result.err.find("kernel record read"), std::string::npos) << p.result.err;
    EXPECT_GT(p.launches[0].at("launch__registers_per_thread"), 0.0);
  }
}

// CUPTI's counter availability image costs ~110 ms and is read only when the
// host will not start without it (range_session.cc): a chip as old as this
// CUPTI (the H200's GH100 and CUPTI 13.0) starts without it.
TEST(KernelsAgentGpu, CounterAvailabilityIsReadOnlyWhenTheHostNeedsIt) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Profiled p = run_profiled({{"STRATA_KERNEL_NAME", "driver_kernel"},
                             {"STRATA_KERNEL_COUNT", "1"},
                             {"STRATA_AGENT_DEBUG", "1"}});
  ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
  ASSERT_EQ(p.launches.size(), 1u) << p.result.err;
  EXPECT_EQ(p.launches[0].status, 0u) << p.result.err;
  const std::string& log = p.result.err;
  // The first host initialization comes before any availability call, and
  // the image is read exactly when that first try failed.
  const std::string success = "cuptiProfilerHostInitialize -> CUPTI_SUCCESS";
  const size_t first_try = log.find("cuptiProfilerHostInitialize -> ");
  const size_t read_at = log.find("cuptiProfilerGetCounterAvailability");
  ASSERT_NE(first_try, std::string::npos) << log;
  const bool read = read_at != std::string::npos;
  EXPECT_TRUE(!read || first_try < read_at) << log;
  const bool started_without = log.compare(first_try, success.size(), success) == 0;
  EXPECT_NE(started_without, read) << log;
  if (read) {
    EXPECT_NE(log.find("cuptiProfilerHostInitialize(availability) -> CUPTI_SUCCESS"),
              std::string::npos)
        << log;
  }
  if (started_without) std::fprintf(stderr, "the host started without the availability image\n");
}

TEST(KernelsAgentGpu, NoMatchingKernelProfilesNothingButCountsEverything) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Profiled p = run_profiled({{"STRATA_KERNEL_NAME", "no_such_kernel"}});
  ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
  EXPECT_TRUE(p.launches.empty());
  EXPECT_TRUE(p.intact);
  EXPECT_EQ(seen(p, "scale_kernel"), 3u);
  EXPECT_EQ(seen(p, "other_kernel"), 2u);
}

// A profiler already subscribed to CUPTI (nsys, compute-sanitizer, Kineto
// loaded into the program) keeps it: the agent says so in one line, writes
// no spool, and the program runs as it would alone.
TEST(KernelsAgentGpu, AnotherCuptiSubscriberIsOneLineAndTheProgramCompletes) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Profiled p = run_profiled({{"STRATA_KERNEL_NAME", "scale_kernel"}}, {"--cupti-first"});
  ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
  EXPECT_NE(p.result.out.find("ok"), std::string::npos);
  EXPECT_NE(p.result.err.find("kernels_prog: subscribed to CUPTI"), std::string::npos)
      << p.result.err;
  const std::string line = "strata agent: another CUDA profiler";
  const size_t at = p.result.err.find(line);
  ASSERT_NE(at, std::string::npos) << p.result.err;
  EXPECT_EQ(p.result.err.find(line, at + 1), std::string::npos) << "said twice\n" << p.result.err;
  EXPECT_EQ(p.spools, 0);
  EXPECT_TRUE(p.launches.empty());
}

TEST(KernelsAgentGpu, PrivilegeFailureIsOneLineAChunkWithItsStatusAndTheProgramCompletes) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Profiled p = run_profiled(
      {{"STRATA_KERNEL_NAME", "scale_kernel"}, {"STRATA_AGENT_KERNELS_FAIL", "privileges"}});
  ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
  EXPECT_NE(p.result.out.find("ok"), std::string::npos);
  EXPECT_NE(p.result.err.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos)
      << p.result.err;
  EXPECT_NE(p.result.err.find("ERR_NVGPUCTRPERM"), std::string::npos);
  // Profiling stops at the failure: one chunk, for the first scale_kernel.
  ASSERT_EQ(p.launches.size(), 1u);
  const Launch& l = p.launches[0];
  EXPECT_EQ(l.status, 35u);  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
  EXPECT_EQ(l.invocation, 0u);
  EXPECT_EQ(l.metrics.count("gpu__time_duration.sum"), 0u);
  EXPECT_EQ(l.at("launch__grid_size"), 7.0);
  EXPECT_EQ(l.at("launch__block_size"), 128.0);
  EXPECT_GT(l.at("device__attribute_multiprocessor_count"), 0.0);
  EXPECT_EQ(seen(p, "scale_kernel"), 3u);
}

// A device CUPTI's range profiler refuses (vGPU, confidential compute, CMP,
// WSL, an old architecture): the reason cuptiProfilerDeviceSupported gives,
// in one line; the launch's values without counters; the program completes.
TEST(KernelsAgentGpu, UnsupportedDeviceIsOneLineWithTheReasonAndTheProgramCompletes) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Profiled p = run_profiled({{"STRATA_KERNEL_NAME", "scale_kernel"},
                             {"STRATA_AGENT_KERNELS_FAIL", "unsupported-device"}});
  ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
  EXPECT_NE(p.result.out.find("ok"), std::string::npos);
  const std::string line =
      "cannot be profiled by CUPTI's range profiler (CUPTI_ERROR_NOT_SUPPORTED: vGPU)";
  const size_t at = p.result.err.find(line);
  ASSERT_NE(at, std::string::npos) << p.result.err;
  EXPECT_EQ(p.result.err.find(line, at + 1), std::string::npos) << "said twice\n" << p.result.err;
  EXPECT_EQ(p.result.err.find("(?)"), std::string::npos) << "chip name unknown\n" << p.result.err;
  // Profiling stops at the failure: one chunk, for the first scale_kernel.
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.launches[0].status, 27u);  // CUPTI_ERROR_NOT_SUPPORTED
  EXPECT_EQ(p.launches[0].metrics.count("gpu__time_duration.sum"), 0u);
  EXPECT_EQ(p.launches[0].at("launch__grid_size"), 7.0);
  EXPECT_EQ(seen(p, "scale_kernel"), 3u);
}

}  // namespace
