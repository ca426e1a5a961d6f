// store::load_gpu_tables with GpuLoadOptions::timeline (what the Chrome
// export draws), analysis::nvtx_domain_rows (the one NVTX domain rule), and
// the store's "is there anything to report" checks the CLI asks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/gpu_summary.h"
#include "common/global_id.h"
#include "store/kernel_metric_rows.h"
#include "trace_builder.h"

namespace strata {
namespace {

using testing::global_pid;
using testing::global_tid;

store::GpuTables load_timeline(const std::string& path) {
  store::GpuLoadOptions options;
  options.timeline = true;
  auto tables = testing::load_file(path, options);
  EXPECT_TRUE(tables.ok()) << tables.error().message;
  return tables.ok() ? std::move(*tables) : store::GpuTables{};
}

TEST(TimelineLoad, ReadsStreamsLaunchConfigurationLinksAndNames) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    b.runtime(0, 10, global_tid(100, 101), 5, "cuLaunchKernel", 1);
    b.kernel(20, 30, global_pid(100), 5, "k", 3);
    b.memcpy(40, 50, 4096, 1);
    b.memset(60, 70, 8);
    b.exec(
        "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, globalTid INTEGER, priority "
        "INTEGER)");
    b.exec("CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT)");
    int64_t old_name = b.string("old"), new_name = b.string("worker");
    // The higher priority wins over the later row.
    b.exec(
        fmt::format("INSERT INTO ThreadNames VALUES ({}, {}, 10)", new_name, global_tid(100, 101)));
    b.exec(
        fmt::format("INSERT INTO ThreadNames VALUES ({}, {}, 0)", old_name, global_tid(100, 101)));
    b.exec(fmt::format("INSERT INTO PROCESSES VALUES ({}, 100, 'python')", global_pid(100)));
    b.commit();
  }
  auto t = load_timeline(path);
  ASSERT_EQ(t.runtime.event_class, std::vector<int64_t>{1});
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.device_id, std::vector<int64_t>{3});
  EXPECT_EQ(t.kernels.correlation_id, std::vector<int64_t>{5});
  EXPECT_EQ(t.kernels.launch.stream_id, std::vector<int64_t>{7});
  EXPECT_EQ(t.kernels.launch.block[0], (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(t.kernels.launch.registers_per_thread, std::vector<int64_t>{32});
  EXPECT_EQ(t.memcpy.stream_id, std::vector<int64_t>{7});
  EXPECT_EQ(t.memcpy.bytes, std::vector<int64_t>{4096});
  EXPECT_EQ(t.memset.stream_id, std::vector<int64_t>{7});
  ASSERT_TRUE(t.thread_name_ids.count(global_tid(100, 101)));
  const std::string* name = t.string(t.thread_name_ids.at(global_tid(100, 101)));
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(*name, "worker");
  EXPECT_EQ(t.process_names.at(global_pid(100)), "python");
}

TEST(TimelineLoad, WithoutTheOptionTheExtraColumnsStayEmpty) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    b.runtime(0, 10, global_tid(100, 101), 5, "cudaLaunchKernel");
    b.kernel(20, 30, global_pid(100), 5, "k");
    b.memcpy(40, 50, 4096, 1);
    b.commit();
  }
  auto t = testing::load_file(path);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->runtime.event_class.empty());
  EXPECT_TRUE(t->kernels.launch.stream_id.empty());
  EXPECT_TRUE(t->memcpy.stream_id.empty());
  EXPECT_TRUE(t->thread_name_ids.empty());
}

TEST(TimelineLoad, CopiesWithoutBytesOrKindStillLoadForATimelineOnly) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    b.memcpy(40, 50, 4096, 1);
    b.exec("ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY DROP COLUMN copyKind");
    b.commit();
  }
  auto t = load_timeline(path);
  EXPECT_EQ(t.memcpy.copy_kind, std::vector<int64_t>{0});
  auto summary = testing::load_file(path);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.error().message.find("has no column copyKind"), std::string::npos);
}

TEST(TimelineLoad, LastTimestampLeavesNullEndsOut) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    b.nvtx(-50, std::nullopt, store::kNvtxPushPopRange, global_tid(1, 1), "open");
    b.nvtx(-70, -60, store::kNvtxPushPopRange, global_tid(1, 1), "closed");
    b.commit();
  }
  auto t = load_timeline(path);
  EXPECT_EQ(t.nvtx.last_timestamp, -50);
}

TEST(HasCudaData, RuntimeOrKernelRowsOnly) {
  testing::ScratchDir dir;
  std::string empty = dir.file("empty.sqlite"), calls = dir.file("calls.sqlite"),
              copies = dir.file("copies.sqlite");
  {
    testing::TraceBuilder b(empty, testing::kWithEverything);
    b.commit();
  }
  {
    testing::TraceBuilder b(calls, testing::kWithEverything);
    b.runtime(0, 10, global_tid(1, 1), 1, "cudaMalloc");
    b.commit();
  }
  {
    testing::TraceBuilder b(copies, testing::kWithEverything);
    b.memcpy(0, 10, 8, 1);  // copies alone are not "CUDA trace data"
    b.commit();
  }
  for (auto [path, expected] :
       {std::pair{empty, false}, std::pair{calls, true}, std::pair{copies, false}}) {
    auto reader = store::TraceReader::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    auto present = store::cuda_data_present(*reader);
    ASSERT_TRUE(present.ok()) << present.error().message;
    EXPECT_EQ(*present, expected) << path;
  }
}

TEST(NvtxDomainRows, EarliestCreationPerDomainAndProcessFirstRowOnATie) {
  store::NvtxColumns n;
  auto add = [&](int64_t start, int32_t type, int64_t gtid, int64_t domain) {
    n.start.push_back(start);
    n.end.push_back(store::NvtxColumns::kNoEnd);
    n.event_type.push_back(type);
    n.global_tid.push_back(gtid);
    n.domain_id.push_back(domain);
    n.text_id.push_back(store::kNoString);
    n.text_index.push_back(-1);
  };
  add(50, store::kNvtxDomainCreate, global_tid(1, 1), 7);  // 0: later
  add(10, store::kNvtxDomainCreate, global_tid(1, 2), 7);  // 1: earliest, same process
  add(10, store::kNvtxDomainCreate, global_tid(1, 3), 7);  // 2: tie, later row
  add(99, store::kNvtxDomainCreate, global_tid(2, 1), 7);  // 3: another process
  add(0, store::kNvtxPushPopRange, global_tid(1, 1), 7);   // 4: a range, never a name
  auto rows = analysis::nvtx_domain_rows(n);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at({7, global_id::process_of(global_tid(1, 1))}), 1u);
  EXPECT_EQ(rows.at({7, global_id::process_of(global_tid(2, 1))}), 3u);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(HasKernelProfiles, OnlyWithAProfiledLaunchRow) {
  testing::ScratchDir dir;
  std::string none = dir.file("none.sqlite"), one = dir.file("one.sqlite"),
              nsys = dir.file("nsys.sqlite");
  for (const auto& path : {none, one}) {
    auto writer = store::TraceWriter::create(path, true);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    if (path == one) {
      store::ProfiledLaunch launch;
      launch.kernel_name = "_Z4gemmv";
      launch.metrics = {{"gpu__time_duration.sum", 1000}};
      ASSERT_TRUE(store::write_profiled_launch(*writer, launch).ok());
    }
    ASSERT_TRUE(writer->commit().ok());
  }
  {
    testing::TraceBuilder b(nsys, testing::kWithEverything);  // no strata tables at all
    b.commit();
  }
  for (auto [path, expected] :
       {std::pair{none, false}, std::pair{one, true}, std::pair{nsys, false}}) {
    auto reader = store::TraceReader::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    auto present = store::kernel_profiles_present(*reader);
    ASSERT_TRUE(present.ok()) << present.error().message;
    EXPECT_EQ(*present, expected) << path;
  }
}

// The kernel table of `path` loaded twice: by demangled and by mangled name.
std::pair<store::GpuTables, store::GpuTables> kernels_by_both_names(const std::string& path) {
  store::GpuLoadOptions options;
  options.tables = store::kKernelTable;
  auto demangled = testing::load_file(path, options);
  options.kernel_names = store::KernelNameKind::kMangled;
  auto mangled = testing::load_file(path, options);
  EXPECT_TRUE(demangled.ok() && mangled.ok());
  if (!demangled.ok() || !mangled.ok()) return {};
  return {std::move(*demangled), std::move(*mangled)};
}

TEST(MangledKernelNames, OneInstantiationPerDemangledNameFromTheSameRows) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    const int64_t gemm = b.string("gemm");
    const int64_t d128 = b.string("void ns::gemm<float, 128>(float const*, int)");
    const int64_t d64 = b.string("void ns::gemm<float, 64>(float const*, int)");
    const int64_t m128 = b.string("_ZN2ns4gemmIfLi128EEEvPKfi");
    const int64_t m64 = b.string("_ZN2ns4gemmIfLi64EEEvPKfi");
    b.kernel_ids(0, 10, global_pid(1), 1, d128, gemm, m128);
    b.kernel_ids(20, 30, global_pid(1), 2, d64, gemm, m64);
    b.kernel_ids(40, 50, global_pid(1), 3, d128, gemm, m128);
    // extern "C": no mangled name (NULL), the demangled name stands for it.
    const int64_t plain = b.string("add");
    b.kernel_ids(60, 70, global_pid(1), 4, plain, plain);
    b.commit();
  }
  auto [demangled, mangled] = kernels_by_both_names(path);
  auto names = store::mangled_kernel_names(demangled, mangled);
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(names["void ns::gemm<float, 128>(float const*, int)"], "_ZN2ns4gemmIfLi128EEEvPKfi");
  EXPECT_EQ(names["void ns::gemm<float, 64>(float const*, int)"], "_ZN2ns4gemmIfLi64EEEvPKfi");
  EXPECT_EQ(names["add"], "add");
  // Loads of different rows pair nothing.
  mangled.kernels.start.pop_back();
  mangled.kernels.name_id.pop_back();
  mangled.kernels.end.pop_back();
  EXPECT_TRUE(store::mangled_kernel_names(demangled, mangled).empty());
}

TEST(MangledKernelNames, ADemangledNameTwoMangledNamesShareIsLeftOut) {
  testing::ScratchDir dir;
  std::string path = dir.file("t.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    const int64_t k = b.string("k");
    b.kernel_ids(0, 10, global_pid(1), 1, k, k, b.string("_Z1kv"));
    b.kernel_ids(20, 30, global_pid(2), 2, k, k, b.string("k"));
    b.commit();
  }
  auto [demangled, mangled] = kernels_by_both_names(path);
  EXPECT_TRUE(store::mangled_kernel_names(demangled, mangled).empty());
}

}  // namespace
}  // namespace strata
