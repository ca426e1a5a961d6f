// Load + summaries over a synthetic capture the size of a long training run:
// 1M kernel rows and 1M runtime rows in Nsight Systems' export tables
// (created with strata's copy of nsys's DDL, filled through SQLite directly).
// The budget: loading the kernel table and computing cuda_gpu_kern_sum well
// under 1 s. Prints the median of several runs of each step and, as the
// ratio, strata's kern_sum against a bare SQLite GROUP BY that computes only
// sum/count/min/max (no median, no standard deviation: a lower bound on what
// nsys's SQL-based script costs).
//
// usage: gpu_reports_speed [ROWS [RUNS]]   (default 1000000 5)
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/gpu_summary.h"
#include "report/gpu_reports.h"
#include "store/gpu_tables.h"
#include "store/schema.h"
#include "store/trace_db.h"

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of this thread: on a loaded 2-core machine the wall time also
// measures the neighbours, this does not. Both are printed.
double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fmt::print(stderr, "gpu_reports_speed: {}: {}\n", what, sqlite3_errmsg(db));
    std::exit(1);
  }
}

void exec(sqlite3* db, const std::string& sql) {
  check(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), db, sql.c_str());
}

// A capture shaped like a real one: 300 distinct kernels (Zipf-like, a few
// hot), one launch call per kernel, monotonic timestamps.
void make_capture(const std::string& path, int64_t rows) {
  sqlite3* db = nullptr;
  check(sqlite3_open(path.c_str(), &db), db, "open");
  exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
  for (auto ddl : strata::store::schema::nsys_tables()) exec(db, std::string(ddl));
  exec(db, "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3')");
  exec(db, "BEGIN");
  constexpr int kKernels = 300;
  sqlite3_stmt* s = nullptr;
  check(sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &s, nullptr), db, "ids");
  for (int i = 0; i <= kKernels; ++i) {
    std::string name = i == 0 ? "cudaLaunchKernel"
                              : fmt::format("void gemm_kernel<{}, float>(float const*, float*)", i);
    sqlite3_bind_int64(s, 1, i + 1);
    sqlite3_bind_text(s, 2, name.c_str(), -1, SQLITE_TRANSIENT);
    check(sqlite3_step(s), db, "StringIds");
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  sqlite3_stmt* k = nullptr;
  sqlite3_stmt* r = nullptr;
  check(sqlite3_prepare_v2(
            db,
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
            "correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread, "
            "gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
            "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES "
            "(?, ?, 0, 1, 7, ?, ?, ?, ?, ?, 32, 64, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?)",
            -1, &k, nullptr),
        db, "kernel insert");
  check(sqlite3_prepare_v2(db,
                           "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, "
                           "globalTid, correlationId, nameId, returnValue) "
                           "VALUES (?, ?, 0, ?, ?, 1, 0)",
                           -1, &r, nullptr),
        db, "runtime insert");
  const int64_t pid = int64_t{4242} << 24;
  int64_t t = 1'000'000'000;
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < rows; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    // Hot kernels first: the square of a uniform draw favours low ids.
    double u = static_cast<double>(x % 1'000'000) / 1e6;
    int64_t name = 2 + static_cast<int64_t>(u * u * kKernels) % kKernels;
    int64_t api_end = t + 2000 + static_cast<int64_t>(x % 500);
    int64_t kernel_start = api_end + static_cast<int64_t>(x % 3000) - 500;
    int64_t kernel_end = kernel_start + 1000 + static_cast<int64_t>((x >> 20) % 20000);
    sqlite3_bind_int64(r, 1, t);
    sqlite3_bind_int64(r, 2, api_end);
    sqlite3_bind_int64(r, 3, pid | 4243);
    sqlite3_bind_int64(r, 4, i + 1);
    check(sqlite3_step(r), db, "runtime row");
    sqlite3_reset(r);
    int64_t values[] = {kernel_start, kernel_end, i + 1, pid, name, name, name, i};
    for (int c = 0; c < 8; ++c) sqlite3_bind_int64(k, c + 1, values[c]);
    check(sqlite3_step(k), db, "kernel row");
    sqlite3_reset(k);
    t = api_end + 100;
  }
  sqlite3_finalize(k);
  sqlite3_finalize(r);
  exec(db, "COMMIT");
  sqlite3_close(db);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1'000'000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  auto dir = std::filesystem::temp_directory_path() /
             fmt::format("strata-gpu-reports-speed-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::string path = (dir / "capture.sqlite").string();
  auto made = Clock::now();
  make_capture(path, rows);
  fmt::print("capture: {} kernels + {} runtime rows, {:.1f} MB, written in {:.2f} s\n", rows, rows,
             static_cast<double>(std::filesystem::file_size(path)) / 1e6, seconds_since(made));

  std::vector<double> kern_cpu, kern_load, kern_sum, all_load, api_sum, exec_sum, sql_group;
  size_t kernel_rows_out = 0;
  for (int run = 0; run < runs; ++run) {
    auto reader = strata::store::TraceReader::open(path);
    if (!reader.ok()) {
      fmt::print(stderr, "gpu_reports_speed: {}\n", reader.error().message);
      return 1;
    }
    // Interleaved, so that a neighbour's load hits every method alike.
    auto t0 = Clock::now();
    strata::store::GpuLoadOptions kernels_only;
    kernels_only.tables = strata::store::kKernelTable;
    kernels_only.kernel_links = false;
    double c0 = thread_cpu_s();
    auto kernels = strata::store::load_gpu_tables(reader->handle(), path, kernels_only);
    kern_load.push_back(seconds_since(t0));
    auto t1 = Clock::now();
    auto summary = strata::analysis::cuda_gpu_kern_sum(*kernels);
    auto table = strata::report::cuda_gpu_kern_sum_report(summary, path);
    kern_sum.push_back(seconds_since(t1));
    kernel_rows_out = table.table.rows.size();
    kern_cpu.push_back(thread_cpu_s() - c0);

    auto t2 = Clock::now();
    strata::store::GpuLoadOptions both;
    both.tables = strata::store::kKernelTable | strata::store::kRuntimeTable;
    auto tables = strata::store::load_gpu_tables(reader->handle(), path, both);
    all_load.push_back(seconds_since(t2));
    auto t3 = Clock::now();
    (void)strata::analysis::cuda_api_sum(*tables);
    api_sum.push_back(seconds_since(t3));
    auto t4 = Clock::now();
    (void)strata::analysis::cuda_kern_exec_sum(*tables);
    exec_sum.push_back(seconds_since(t4));

    auto t5 = Clock::now();
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(reader->handle(),
                       "SELECT s.value, sum(k.end - k.start), count(*), min(k.end - k.start), "
                       "max(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds "
                       "AS s ON s.id = k.demangledName GROUP BY 1 ORDER BY 2 DESC",
                       -1, &s, nullptr);
    while (sqlite3_step(s) == SQLITE_ROW) {
    }
    sqlite3_finalize(s);
    sql_group.push_back(seconds_since(t5));
  }
  double kern_total = median(kern_load) + median(kern_sum);
  fmt::print("medians of {} runs:\n", runs);
  fmt::print("  load kernel columns          {:8.3f} s\n", median(kern_load));
  fmt::print("  cuda_gpu_kern_sum + table    {:8.3f} s  ({} rows)\n", median(kern_sum),
             kernel_rows_out);
  fmt::print("  load kernel + runtime        {:8.3f} s\n", median(all_load));
  fmt::print("  cuda_api_sum                 {:8.3f} s\n", median(api_sum));
  fmt::print("  cuda_kern_exec_sum           {:8.3f} s\n", median(exec_sum));
  fmt::print("  sqlite GROUP BY (no median)  {:8.3f} s\n", median(sql_group));
  fmt::print(
      "kern_sum load+compute: {:.3f} s wall, {:.3f} s CPU; ratio to bare SQL GROUP BY: "
      "{:.2f}\n",
      kern_total, median(kern_cpu), kern_total / median(sql_group));
  std::filesystem::remove_all(dir);
  return 0;
}
