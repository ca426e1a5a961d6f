// Ingest throughput: synthesizes a spool of CUPTI 13.0 records (one runtime
// launch call and one kernel per launch, the mix of a launch-bound program,
// plus a sync call every 64 launches), then times ingest_spools into a fresh
// trace on one core. Prints records/s, the median of several runs.
//
//   ingest_speed [RECORDS [RUNS]]   (default 1000000 records, 5 runs)
//   ingest_speed --spool FILE [RUNS]   time a recorded spool instead
//   ingest_speed --write-spool FILE [RECORDS]   only write the synthetic spool
#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "format/spool_writer.h"
#include "import/cupti_ingest.h"
#include "store/trace_db.h"

namespace {

constexpr uint32_t kLaunchCbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr uint32_t kSyncCbid = CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
constexpr size_t kBufferBytes = 8u << 20;  // the agent's default buffer size

bool write_spool(const std::string& path, size_t records) {
  auto spool = strata::format::SpoolWriter::open(path);
  if (!spool) {
    std::fprintf(stderr, "%s\n", spool.error().message.c_str());
    return false;
  }
  const char* names[] = {"_Z4gemmILi128EEvPKfS1_Pfi", "_Z9reduce_opPfi",
                         "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_cublas"};
  strata::format::StringEntry entries[3];
  for (int i = 0; i < 3; ++i) entries[i] = {uint64_t(100 + i), names[i]};
  spool->append_strings(entries);
  std::vector<std::byte> buffer;
  buffer.reserve(kBufferBytes);
  auto put = [&](const void* record, size_t size) {
    if (buffer.size() + size > kBufferBytes) {
      spool->append_cupti_buffer(130001, buffer.data(), buffer.size());
      buffer.clear();
    }
    const auto* p = static_cast<const std::byte*>(record);
    buffer.insert(buffer.end(), p, p + size);
  };
  uint64_t t = 1'000'000'000;
  size_t written = 0;
  for (uint32_t correlation = 1; written < records; ++correlation) {
    CUpti_ActivityAPI api{};
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = correlation % 64 == 0 ? kSyncCbid : kLaunchCbid;
    api.start = t;
    api.end = t + 2500;
    api.processId = 4242;
    api.threadId = 4243;
    api.correlationId = correlation;
    put(&api, sizeof api);
    ++written;
    if (api.cbid == kSyncCbid || written == records) {
      t += 3000;
      continue;
    }
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = t + 4000;
    k.end = t + 9000;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 7;
    k.gridX = 64, k.gridY = k.gridZ = 1;
    k.blockX = 128, k.blockY = k.blockZ = 1;
    k.registersPerThread = 64;
    k.correlationId = correlation;
    k.gridId = correlation;
    uint64_t name = 100 + correlation % 3;
    std::memcpy(reinterpret_cast<char*>(&k) + offsetof(CUpti_ActivityKernel10, name), &name, 8);
    put(&k, sizeof k);
    ++written;
    t += 3000;
  }
  if (!buffer.empty()) spool->append_cupti_buffer(130001, buffer.data(), buffer.size());
  spool->close(0);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "--write-spool" && argc > 2) {
    size_t records = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1'000'000;
    return write_spool(argv[2], records) ? 0 : 1;
  }
  const bool recorded = first == "--spool" && argc > 2;
  size_t records = recorded ? 0 : argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const int runs_arg = recorded ? 3 : 2;
  int runs = argc > runs_arg ? std::atoi(argv[runs_arg]) : 5;
  std::string templ = (std::filesystem::temp_directory_path() / "ingest-speed-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) return 1;
  std::string spool = recorded ? std::string(argv[2]) : templ + "/spool-4242.bin";
  if (!recorded && !write_spool(spool, records)) return 1;
  std::printf("spool: %s%.1f MiB\n", recorded ? "recorded, " : "synthetic, ",
              std::filesystem::file_size(spool) / 1048576.0);

  std::vector<double> ingest_rates, total_rates;
  for (int run = 0; run < runs; ++run) {
    std::string trace = templ + "/trace.sqlite";
    auto t0 = std::chrono::steady_clock::now();
    auto writer = strata::store::TraceWriter::create(trace, true);
    if (!writer) return 1;
    auto t1 = std::chrono::steady_clock::now();
    auto stats = strata::import::ingest_spools({spool}, *writer);
    auto t2 = std::chrono::steady_clock::now();
    if (!stats || !writer->commit()) {
      std::fprintf(stderr, "ingest failed\n");
      return 1;
    }
    auto t3 = std::chrono::steady_clock::now();
    if (recorded && records == 0) records = stats->records;
    if (stats->records != records) {
      std::fprintf(stderr, "walked %llu records of %zu\n",
                   static_cast<unsigned long long>(stats->records), records);
      return 1;
    }
    double ingest_s = std::chrono::duration<double>(t2 - t1).count();
    double total_s = std::chrono::duration<double>(t3 - t0).count();
    ingest_rates.push_back(records / ingest_s);
    total_rates.push_back(records / total_s);
    std::printf("run %d: ingest %.3f s (%.2f M records/s), with create+commit %.3f s\n", run,
                ingest_s, records / ingest_s / 1e6, total_s);
  }
  std::sort(ingest_rates.begin(), ingest_rates.end());
  std::sort(total_rates.begin(), total_rates.end());
  std::printf(
      "median: ingest %.2f M records/s; with create+commit %.2f M records/s "
      "(goal >= 1.00)\n",
      ingest_rates[ingest_rates.size() / 2] / 1e6, total_rates[total_rates.size() / 2] / 1e6);
  std::filesystem::remove_all(templ);
  return 0;
}
