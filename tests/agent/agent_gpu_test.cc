// The agent on a GPU (ctest label `gpu`; SKIPPED without a device): each
// program of tests/gpu runs with the agent injected, and its spool must hold
// exactly what it did. Records are read offline by cupti_walk.h.
#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "cupti_walk.h"
#include "run_command.h"

namespace {

using agent_test::Spool;

struct Traced {
  examples_test::CommandResult result;
  std::vector<Spool> spools;
  long long start_ns = 0, end_ns = 0;
};

Traced run_traced(const std::vector<std::string>& argv) {
  std::string pattern = (std::filesystem::temp_directory_path() / "strata-gpu-XXXXXX").string();
  std::string dir = mkdtemp(pattern.data());
  setenv("STRATA_RUN_DIR", dir.c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", AGENT_LIB, 1);
  setenv("NVTX_INJECTION64_PATH", AGENT_LIB, 1);
  Traced traced;
  traced.result = examples_test::run_command(argv);
  unsetenv("STRATA_RUN_DIR");
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("NVTX_INJECTION64_PATH");
  for (const std::string& path : agent_test::spool_files(dir)) {
    std::string error;
    auto spool = agent_test::read_spool(path, &error);
    EXPECT_TRUE(spool) << error;
    if (spool) traced.spools.push_back(std::move(*spool));
  }
  std::istringstream out(traced.result.out);
  std::string key;
  long long value = 0;
  while (out >> key >> value) {
    if (key == "start_ns") traced.start_ns = value;
    if (key == "end_ns") traced.end_ns = value;
  }
  if (getenv("STRATA_KEEP_RUN_DIR") == nullptr) std::filesystem::remove_all(dir);
  return traced;
}

size_t kernels_named(const Spool& spool, const std::string& part) {
  return std::count_if(spool.kernels.begin(), spool.kernels.end(),
                       [&](const auto& k) { return k.name.find(part) != std::string::npos; });
}

// Every kernel's correlation id names a runtime API record; returns those records.
std::vector<agent_test::ApiCall> launches_of(const Spool& spool, const std::string& part) {
  std::map<uint32_t, agent_test::ApiCall> runtime;
  for (const auto& api : spool.apis) {
    if (api.runtime) runtime[api.correlation] = api;
  }
  std::map<uint32_t, agent_test::ApiCall> found;
  for (const auto& k : spool.kernels) {
    if (k.name.find(part) == std::string::npos) continue;
    auto it = runtime.find(k.correlation);
    EXPECT_NE(it, runtime.end()) << "kernel " << k.name << " correlation " << k.correlation;
    if (it != runtime.end()) found[k.correlation] = it->second;
  }
  std::vector<agent_test::ApiCall> calls;
  for (auto& [id, call] : found) calls.push_back(call);
  return calls;
}

void expect_sound(const Spool& spool) {
  EXPECT_EQ(spool.unknown_records, 0u) << spool.path;
  EXPECT_EQ(spool.unresolved_strings, 0u) << spool.path;
  EXPECT_GT(spool.buffers, 0u);
  for (auto [kind, total] : spool.drop_counters) EXPECT_EQ(total, 0u) << "drop counter " << kind;
}

TEST(AgentGpu, BasicProgramIsRecordedExactly) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int kKernels = 100;
  Traced t = run_traced({GPU_BASIC, std::to_string(kKernels)});
  ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
  ASSERT_EQ(t.spools.size(), 1u) << t.result.err;
  const Spool& s = t.spools[0];
  expect_sound(s);
  EXPECT_TRUE(s.clean_end);

  EXPECT_EQ(kernels_named(s, "empty_kernel"), size_t{kKernels});
  EXPECT_EQ(launches_of(s, "empty_kernel").size(), size_t{kKernels});
  for (const auto& k : s.kernels) {
    EXPECT_EQ(k.block[0], 32);
    EXPECT_LE(k.start, k.end);
    EXPECT_GE(static_cast<long long>(k.start), t.start_ns);
    EXPECT_LE(static_cast<long long>(k.end), t.end_ns);
  }
  for (const auto& api : s.apis) {
    EXPECT_LE(api.start, api.end);
    EXPECT_GE(static_cast<long long>(api.start), t.start_ns);
    EXPECT_LE(static_cast<long long>(api.end), t.end_ns);
  }

  // Copies: kind, direction, bytes, pageable vs pinned host memory.
  std::multiset<std::tuple<int, int, uint64_t>> copies;  // copyKind, host memory kind, bytes
  for (const auto& m : s.memcpys) {
    int host = m.copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? m.src_kind : m.dst_kind;
    copies.insert({m.copy_kind, host, m.bytes});
    EXPECT_LE(m.start, m.end);
  }
  std::multiset<std::tuple<int, int, uint64_t>> expected = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 1u << 20},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 1u << 20},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 2u << 20},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 2u << 20},
  };
  EXPECT_EQ(copies, expected);
  ASSERT_EQ(s.memsets.size(), 1u);
  EXPECT_EQ(s.memsets[0].bytes, 3u << 20);
  EXPECT_EQ(s.memsets[0].value, 0x5au);

  // SYNCHRONIZATION records are asked for by name (config.h, kRecordDefault);
  // SyncRecordsWhenAskedFor checks them.
  EXPECT_TRUE(s.syncs.empty()) << s.syncs.size() << " sync records by default";

  // NVTX: each range opens once (with its name, and domain where given) and closes once.
  std::map<std::string, uint32_t> opened;
  std::map<uint32_t, int> closed;
  for (const auto& m : s.markers) {
    if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
      EXPECT_EQ(opened.count(m.name), 0u) << m.name;
      opened[m.name] = m.id;
      if (m.name == "domain-range") {
        EXPECT_EQ(m.domain, "strata-test");
      }
    } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
      ++closed[m.id];
    }
    EXPECT_GE(static_cast<long long>(m.timestamp), t.start_ns);
    EXPECT_LE(static_cast<long long>(m.timestamp), t.end_ns);
  }
  for (const char* name : {"outer", "inner", "copies", "domain-range"}) {
    ASSERT_EQ(opened.count(name), 1u) << name;
    EXPECT_EQ(closed[opened[name]], 1) << name;
  }

  ASSERT_GE(s.devices.size(), 1u);
  EXPECT_FALSE(s.devices[0].name.empty());
  EXPECT_GT(s.devices[0].sm_count, 0u);
  EXPECT_GT(s.devices[0].global_memory, 0u);
  EXPECT_GE(s.devices[0].cc_major, 7u);
  EXPECT_FALSE(s.thread_names.empty());
  ASSERT_FALSE(s.args.empty());
  EXPECT_EQ(s.args.back(), std::to_string(kKernels));
}

TEST(AgentGpu, SyncRecordsWhenAskedFor) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  setenv("STRATA_AGENT_RECORD", "kernel,runtime,sync", 1);
  Traced t = run_traced({GPU_BASIC, "10"});
  unsetenv("STRATA_AGENT_RECORD");
  ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
  ASSERT_EQ(t.spools.size(), 1u) << t.result.err;
  const Spool& s = t.spools[0];
  size_t context_syncs = std::count_if(s.syncs.begin(), s.syncs.end(), [](const auto& y) {
    return y.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  });
  EXPECT_GE(context_syncs, 1u);
}

TEST(AgentGpu, ConcurrentThreadsAndStreamsLoseNoLaunch) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int kPerStream = 200;
  Traced t = run_traced({GPU_THREADS, std::to_string(kPerStream)});
  ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
  ASSERT_EQ(t.spools.size(), 1u);
  const Spool& s = t.spools[0];
  expect_sound(s);
  EXPECT_EQ(kernels_named(s, "thread_kernel"), size_t{8 * 2 * kPerStream});
  auto launches = launches_of(s, "thread_kernel");
  EXPECT_EQ(launches.size(), size_t{8 * 2 * kPerStream});
  std::set<uint32_t> tids, streams;
  for (const auto& call : launches) tids.insert(call.tid);
  for (const auto& k : s.kernels) streams.insert(k.stream);
  EXPECT_EQ(tids.size(), 8u);
  EXPECT_GE(streams.size(), 16u);
}

TEST(AgentGpu, GraphKernelsAppearAsKernels) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int kReplays = 20;
  Traced t = run_traced({GPU_GRAPH, std::to_string(kReplays)});
  ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
  ASSERT_EQ(t.spools.size(), 1u);
  const Spool& s = t.spools[0];
  expect_sound(s);
  EXPECT_EQ(kernels_named(s, "graph_kernel"), size_t{5 * kReplays});
  auto launches = launches_of(s, "graph_kernel");
  EXPECT_EQ(launches.size(), size_t{kReplays});  // graph kernels carry cudaGraphLaunch's id
  for (const auto& call : launches) {
    EXPECT_EQ(call.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  }
  for (const auto& k : s.kernels) EXPECT_NE(k.graph_id, 0u);
}

TEST(AgentGpu, ForkedChildrenDoNotHangAndExecdChildrenGetTheirOwnSpool) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Traced t = run_traced({GPU_FORK});
  ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
  ASSERT_EQ(t.spools.size(), 2u) << t.result.err;
  const Spool* parent = nullptr;
  const Spool* child = nullptr;
  for (const auto& s : t.spools)
    (s.args.size() > 1 && s.args[1] == "--child" ? child : parent) = &s;
  ASSERT_NE(parent, nullptr);
  ASSERT_NE(child, nullptr);
  expect_sound(*parent);
  expect_sound(*child);
  EXPECT_EQ(kernels_named(*parent, "parent_kernel"), 10u);
  EXPECT_EQ(kernels_named(*parent, "child_kernel"), 0u);
  EXPECT_EQ(kernels_named(*child, "child_kernel"), 7u);
  EXPECT_EQ(child->ppid, parent->pid);
  EXPECT_NE(t.result.out.find("child_pid " + std::to_string(child->pid)), std::string::npos);
  EXPECT_TRUE(parent->clean_end);  // the fork child did not end it
  EXPECT_TRUE(child->clean_end);
}

TEST(AgentGpu, CrashKeepsWhatWasFlushedAndTheSignal) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  Traced t = run_traced({GPU_CRASH});
  EXPECT_EQ(t.result.exit_code, 128 + SIGSEGV) << t.result.err;
  ASSERT_EQ(t.spools.size(), 1u);
  const Spool& s = t.spools[0];
  EXPECT_EQ(s.unknown_records, 0u);
  EXPECT_EQ(s.unresolved_strings, 0u);
  EXPECT_EQ(kernels_named(s, "early_kernel"), 50u);
  EXPECT_TRUE(s.end_seen);
  EXPECT_FALSE(s.clean_end);
  EXPECT_EQ(s.end_signal, static_cast<uint32_t>(SIGSEGV));
}

}  // namespace
