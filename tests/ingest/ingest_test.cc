// Ingest of the agent's spools: the real fixture spools recorded on the H200
// (tests/data/README.md) must give the same kernel, API and NVTX counts as the
// nsys export of the same program; damaged spools ingest with counters, never
// a crash; names of any length and bytes are stored intact.
#include "import/cupti_ingest.h"

#include <cupti_activity.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/spool_writer.h"
#include "import/cupti_records.h"
#include "store/kernel_names.h"
#include "store/trace_db.h"
#include "util/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using strata::import::IngestStats;

const std::string kData = STRATA_TEST_DATA;
const std::string kSlowSpool = kData + "/spool-gpu_matmul-slow_loop_sync/spool-1688.bin";
const std::string kBatchedSpool = kData + "/spool-gpu_matmul-batched/spool-1703.bin";
const std::string kNsysExport = kData + "/nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite";

using strata::test_util::TempDir;

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Ingests `spools` into a fresh trace at `trace`.
IngestStats ingest_to(const std::vector<std::string>& spools, const std::string& trace) {
  auto writer = strata::store::TraceWriter::create(trace, true);
  EXPECT_TRUE(writer) << writer.error().message;
  strata::store::RunInfo run;
  run.verb = "trace";
  EXPECT_TRUE(writer->write_run(run));
  auto stats = strata::import::ingest_spools(spools, *writer);
  EXPECT_TRUE(stats) << stats.error().message;
  auto committed = writer->commit();
  EXPECT_TRUE(committed) << committed.error().message;
  return stats ? *stats : IngestStats{};
}

// Runs a query of one integer on a file; -1 when it fails.
int64_t query_int(const std::string& file, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

// name -> count rows of a two-column query.
std::map<std::string, int64_t> query_counts(const std::string& file, const std::string& sql) {
  std::map<std::string, int64_t> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(stmt, 0);
        out[text ? reinterpret_cast<const char*>(text) : ""] = sqlite3_column_int64(stmt, 1);
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

std::string query_text(const std::string& file, const std::string& sql) {
  std::string out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      out.assign(static_cast<const char*>(sqlite3_column_blob(stmt, 0)),
                 static_cast<size_t>(sqlite3_column_bytes(stmt, 0)));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

const char* kKernelCounts =
    "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
    "ON s.id = k.demangledName GROUP BY 1";
const char* kApiCounts =
    "SELECT s.value, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
    "ON s.id = r.nameId GROUP BY 1";
const char* kNvtxCounts =
    "SELECT coalesce(text, (SELECT value FROM StringIds WHERE id = textId)), count(*) "
    "FROM NVTX_EVENTS WHERE eventType IN (59, 60) GROUP BY 1";

int64_t counter(const std::string& trace, const std::string& name) {
  int64_t v = query_int(trace, "SELECT value FROM strata_counters WHERE name = '" + name + "'");
  return v < 0 ? 0 : v;
}

int64_t damage_counters(const std::string& trace) {
  return query_int(trace,
                   "SELECT coalesce(sum(value), 0) FROM strata_counters WHERE name IN "
                   "('spool.crc_failures', 'spool.resyncs', 'spool.truncated_bytes', "
                   "'spool.no_end_marker', 'spool.unreadable', 'spool.skipped_bytes')");
}

void print_side_by_side(const char* what, const std::map<std::string, int64_t>& strata,
                        const std::map<std::string, int64_t>& nsys) {
  std::printf("%-10s %8s %8s  name\n", what, "strata", "nsys");
  std::map<std::string, std::pair<int64_t, int64_t>> all;
  for (const auto& [k, v] : strata) all[k].first = v;
  for (const auto& [k, v] : nsys) all[k].second = v;
  for (const auto& [k, v] : all) {
    std::printf("%-10s %8lld %8lld  %.100s\n", "", static_cast<long long>(v.first),
                static_cast<long long>(v.second), k.c_str());
  }
}

int64_t matching(const std::map<std::string, int64_t>& counts, const std::string& prefix) {
  int64_t n = 0;
  for (const auto& [k, v] : counts) {
    if (k.rfind(prefix, 0) == 0) n += v;
  }
  return n;
}

TEST(IngestFixture, SlowLoopSyncMatchesTheNsysExport) {
  TempDir dir;
  std::string trace = dir.file("slow.sqlite");
  IngestStats stats = ingest_to({kSlowSpool}, trace);
  EXPECT_EQ(stats.spools, 1u);
  EXPECT_EQ(stats.crashed_processes, 0u);

  auto kernels = query_counts(trace, kKernelCounts);
  auto nsys_kernels = query_counts(kNsysExport, kKernelCounts);
  auto apis = query_counts(trace, kApiCounts);
  auto nsys_apis = query_counts(kNsysExport, kApiCounts);
  auto nvtx = query_counts(trace, kNvtxCounts);
  auto nsys_nvtx = query_counts(kNsysExport, kNvtxCounts);
  print_side_by_side("kernels", kernels, nsys_kernels);
  print_side_by_side("api", apis, nsys_apis);
  print_side_by_side("nvtx", nvtx, nsys_nvtx);

  int64_t gemm = 0;
  for (const auto& [name, n] : kernels) {
    if (name.find("gemm") != std::string::npos) gemm += n;
  }
  EXPECT_EQ(gemm, 129);  // 128 iterations + the warm-up (stdout.txt, the export's 129)
  EXPECT_EQ(kernels, nsys_kernels);
  EXPECT_GE(matching(apis, "cudaDeviceSynchronize"), 128);
  for (const char* api : {"cudaLaunchKernel", "cudaDeviceSynchronize", "cudaMemcpy"}) {
    EXPECT_EQ(matching(apis, api), matching(nsys_apis, api)) << api;
  }
  EXPECT_EQ(nvtx["slow_loop_sync_iteration"], 128);
  EXPECT_EQ(nvtx, nsys_nvtx);

  // The same thread encoding as the CPU layer: pid in bits 24..47.
  EXPECT_EQ(query_int(trace,
                      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                      "WHERE (globalTid >> 24) & 16777215 != 1688"),
            0);
  EXPECT_EQ(query_int(trace, "SELECT count(*) FROM PROCESSES WHERE pid = 1688"), 1);
  EXPECT_GE(query_int(trace, "SELECT count(*) FROM TARGET_INFO_GPU"), 1);
  std::printf("gpu: %s\n", query_text(trace, "SELECT name FROM TARGET_INFO_GPU").c_str());
  // An intact spool leaves no damage counters.
  EXPECT_EQ(damage_counters(trace), 0);
}

TEST(IngestFixture, BatchedHasTheBatchedGemm) {
  TempDir dir;
  std::string trace = dir.file("batched.sqlite");
  IngestStats stats = ingest_to({kBatchedSpool}, trace);
  auto kernels = query_counts(trace, kKernelCounts);
  auto apis = query_counts(trace, kApiCounts);
  print_side_by_side("kernels", kernels, {});
  print_side_by_side("api", apis, {});
  int64_t gemm = 0;
  for (const auto& [name, n] : kernels) {
    if (name.find("gemm") != std::string::npos) gemm += n;
  }
  EXPECT_GE(gemm, 1);
  EXPECT_EQ(stats.kernels, static_cast<uint64_t>(query_int(
                               trace, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")));
  EXPECT_EQ(damage_counters(trace), 0);
}

TEST(IngestDamage, TruncatedSpoolIsCounted) {
  TempDir dir;
  auto bytes = read_bytes(kSlowSpool);
  bytes.resize(bytes.size() / 2 + 3);
  std::string spool = dir.file("spool-1.bin");
  write_bytes(spool, bytes);
  std::string trace = dir.file("t.sqlite");
  IngestStats stats = ingest_to({spool}, trace);
  EXPECT_EQ(stats.crashed_processes, 1u);
  EXPECT_GT(counter(trace, "spool.no_end_marker"), 0);
  EXPECT_GT(counter(trace, "spool.truncated_bytes"), 0);
  EXPECT_LT(stats.kernels, 129u);
}

TEST(IngestDamage, CorruptChunkIsCounted) {
  TempDir dir;
  auto bytes = read_bytes(kSlowSpool);
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) bytes[i] ^= 0x5a;
  std::string spool = dir.file("spool-1.bin");
  write_bytes(spool, bytes);
  std::string trace = dir.file("t.sqlite");
  IngestStats stats = ingest_to({spool}, trace);
  EXPECT_GT(stats.damaged_chunks, 0u);
  EXPECT_GT(counter(trace, "spool.crc_failures") + counter(trace, "spool.resyncs"), 0);
}

TEST(IngestDamage, UnreadableHeaderIsOneLineAndTheOthersAreKept) {
  TempDir dir;
  auto bytes = read_bytes(kSlowSpool);
  bytes[3] ^= 0xff;  // the magic
  std::string bad = dir.file("spool-1.bin");
  write_bytes(bad, bytes);
  std::string empty = dir.file("spool-2.bin");
  write_bytes(empty, {});
  std::string trace = dir.file("t.sqlite");
  IngestStats stats = ingest_to({bad, empty, kBatchedSpool}, trace);
  EXPECT_EQ(stats.unreadable_spools, 2u);
  ASSERT_EQ(stats.problems.size(), 2u);
  for (const auto& line : stats.problems) {
    std::printf("problem: %s\n", line.c_str());
    EXPECT_EQ(line.find('\n'), std::string::npos);
  }
  EXPECT_NE(stats.problems[0].find("bad magic"), std::string::npos);
  EXPECT_EQ(counter(trace, "spool.unreadable"), 2);
  EXPECT_GT(stats.kernels, 0u);
}

TEST(IngestDamage, RandomMutationsNeverCrash) {
  const auto original = read_bytes(kSlowSpool);
  uint32_t seed = static_cast<uint32_t>(std::random_device{}());
  if (const char* env = std::getenv("STRATA_TEST_SEED")) seed = std::stoul(env);
  std::printf("mutation seed %u (STRATA_TEST_SEED=%u reproduces)\n", seed, seed);
  std::mt19937 rng(seed);
  TempDir dir;
  std::string spool = dir.file("spool-1.bin");
  std::string trace = dir.file("t.sqlite");
  constexpr int kMutations = 200;
  for (int m = 0; m < kMutations; ++m) {
    auto bytes = original;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0:
          bytes[at] = static_cast<char>(rng());
          break;
        case 1:
          bytes.resize(std::max<size_t>(at, 1));
          break;
        case 2:
          bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(at), rng() % 64,
                       static_cast<char>(rng()));
          break;
        default: {
          size_t len = std::min<size_t>(rng() % 256, bytes.size() - at);
          bytes.erase(bytes.begin() + static_cast<ptrdiff_t>(at),
                      bytes.begin() + static_cast<ptrdiff_t>(at + len));
          break;
        }
      }
      if (bytes.empty()) bytes.push_back(0);
    }
    write_bytes(spool, bytes);
    auto writer = strata::store::TraceWriter::create(trace, true);
    ASSERT_TRUE(writer);
    auto stats = strata::import::ingest_spools({spool}, *writer);
    ASSERT_TRUE(stats) << "mutation " << m << ": " << stats.error().message;
    // CRCs keep damage from becoming data: never more than the original.
    EXPECT_LE(stats->kernels, 129u) << "mutation " << m;
    EXPECT_LE(stats->nvtx_events, 128u) << "mutation " << m;
    EXPECT_LE(stats->unreadable_spools, 1u);
    ASSERT_TRUE(writer->commit());
  }
}

// A spool made here: one kernel and one NVTX range whose names are long and
// hold control bytes and markup.
TEST(IngestNames, LongAndOddNamesAreStoredIntact) {
  TempDir dir;
  std::string kernel_name = "_Z6kernelPf";
  std::string odd = "<b>&amp;\"'\x01\x02\x1b[31m\t\n\x7f";
  std::string range_name;
  while (range_name.size() < 10000) range_name += odd;
  range_name.resize(10000);
  std::string long_kernel(10000, 'k');
  long_kernel.replace(0, odd.size(), odd);

  std::string spool_path = dir.file("spool-42.bin");
  {
    auto spool = strata::format::SpoolWriter::open(spool_path);
    ASSERT_TRUE(spool) << spool.error().message;
    strata::format::StringEntry entries[] = {
        {11, kernel_name}, {12, long_kernel}, {13, range_name}, {14, "my domain"}};
    ASSERT_TRUE(spool->append_strings(entries));
    std::vector<std::byte> buffer;
    auto put = [&](const void* record, size_t size) {
      const auto* p = static_cast<const std::byte*>(record);
      buffer.insert(buffer.end(), p, p + size);
    };
    for (uint64_t name : {uint64_t{11}, uint64_t{12}}) {
      CUpti_ActivityKernel10 k{};
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.start = 1000;
      k.end = 2000;
      k.gridX = k.gridY = k.gridZ = 1;
      k.blockX = 32, k.blockY = k.blockZ = 1;
      k.correlationId = static_cast<uint32_t>(name);
      std::memcpy(reinterpret_cast<char*>(&k) + offsetof(CUpti_ActivityKernel10, name), &name, 8);
      put(&k, sizeof k);
    }
    CUpti_ActivityMarker2 start{};
    start.kind = CUPTI_ACTIVITY_KIND_MARKER;
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.timestamp = 1500;
    start.id = 7;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.processId = 42;
    start.objectId.pt.threadId = 43;
    uint64_t name = 13, domain = 14;
    std::memcpy(reinterpret_cast<char*>(&start) + offsetof(CUpti_ActivityMarker2, name), &name, 8);
    std::memcpy(reinterpret_cast<char*>(&start) + offsetof(CUpti_ActivityMarker2, domain), &domain,
                8);
    CUpti_ActivityMarker2 end = start;
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = 1800;
    uint64_t zero = 0;
    std::memcpy(reinterpret_cast<char*>(&end) + offsetof(CUpti_ActivityMarker2, name), &zero, 8);
    std::memcpy(reinterpret_cast<char*>(&end) + offsetof(CUpti_ActivityMarker2, domain), &zero, 8);
    put(&start, sizeof start);
    put(&end, sizeof end);
    ASSERT_TRUE(spool->append_cupti_buffer(130001, buffer.data(), buffer.size()));
    spool->close(0);
  }
  std::string trace = dir.file("t.sqlite");
  IngestStats stats = ingest_to({spool_path}, trace);
  EXPECT_EQ(stats.kernels, 2u);
  EXPECT_EQ(query_text(trace,
                       "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON "
                       "s.id = k.mangledName WHERE k.correlationId = 12"),
            long_kernel);
  EXPECT_EQ(query_text(trace,
                       "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON "
                       "s.id = k.shortName WHERE k.correlationId = 11"),
            "kernel");
  EXPECT_EQ(query_text(trace, "SELECT text FROM NVTX_EVENTS WHERE eventType = 59"), range_name);
  EXPECT_EQ(query_text(trace, "SELECT text FROM NVTX_EVENTS WHERE eventType = 75"), "my domain");
  EXPECT_EQ(query_int(trace, "SELECT end - start FROM NVTX_EVENTS WHERE eventType = 59"), 300);
  EXPECT_EQ(query_int(trace, "SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 59"),
            (int64_t{42} << 24) | 43);
}

TEST(IngestNames, ShortNamesAsNsys) {
  using strata::store::base_name;
  EXPECT_EQ(base_name("void gemm_kernel<128>(float const*, float*, int)"), "gemm_kernel");
  EXPECT_EQ(base_name("void at::native::vectorized_elementwise_kernel<4, at::native::Fn>(int, "
                      "at::native::Fn)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(base_name("ns::kernel(int)"), "kernel");
  EXPECT_EQ(base_name("plain_c_kernel"), "plain_c_kernel");
  auto names = strata::store::kernel_names("_Z6kernelPf");
  EXPECT_EQ(names.demangled, "kernel(float*)");
  EXPECT_EQ(names.base, "kernel");
  EXPECT_EQ(names.mangled, "_Z6kernelPf");
}

}  // namespace
