// Bulk insert of kernel rows into a trace (the store's budget: 1M rows in at
// most 1 s). Prints rows/s and the median time of several runs, for the
// inserts alone and with commit (fsync + rename) included.
//
// usage: store_bulk_insert [ROWS [RUNS]]   (default 1000000 5)
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "common/strings.h"
#include "store/trace_db.h"

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of this thread: on a loaded 2-core machine the wall time also
// measures the neighbours, this does not.
double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Rows shaped like a real capture: a few hundred distinct kernels, monotonic
// timestamps, a handful of streams.
std::vector<strata::store::KernelRow> make_rows(size_t count, const std::vector<int64_t>& names) {
  std::vector<strata::store::KernelRow> rows(count);
  int64_t t = 1'000'000'000;
  for (size_t i = 0; i < count; ++i) {
    auto& r = rows[i];
    r.start = t;
    r.end = t + 1500 + static_cast<int64_t>(i % 97) * 10;
    t = r.end + 300;
    r.device_id = 0;
    r.context_id = 1;
    r.stream_id = 7 + static_cast<int64_t>(i % 4);
    r.correlation_id = static_cast<int64_t>(i) + 100;
    r.global_pid = int64_t{4242} << 24;
    int64_t name = names[i % names.size()];
    r.demangled_name = r.short_name = r.mangled_name = name;
    r.grid_x = 128 + static_cast<int64_t>(i % 64);
    r.block_x = 256;
    r.registers_per_thread = 32;
    r.static_shared_memory = 4096;
    r.grid_id = static_cast<int64_t>(i) + 1;
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  size_t rows_per_run = 1'000'000;
  int runs = 5;
  if (argc > 1) rows_per_run = static_cast<size_t>(strata::parse_int(argv[1]).value_or(1'000'000));
  if (argc > 2) runs = static_cast<int>(strata::parse_int(argv[2]).value_or(5));

  char dir_template[] = "/tmp/strata-bench-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    std::perror("strata: mkdtemp");
    return 1;
  }
  const std::filesystem::path dir = dir_template;

  std::vector<double> insert_s, total_s, cpu_s;
  for (int run = 0; run < runs; ++run) {
    std::string path = (dir / fmt::format("bulk{}.sqlite", run)).string();
    auto writer = strata::store::TraceWriter::create(path, /*overwrite=*/true);
    if (!writer) {
      std::fprintf(stderr, "strata: %s\n", writer.error().message.c_str());
      return 1;
    }
    std::vector<int64_t> names;
    for (int k = 0; k < 300; ++k) {
      names.push_back(
          writer->intern(fmt::format("void kernel_{}<float, {}>(float*, int)", k, k)).value());
    }
    auto rows = make_rows(rows_per_run, names);
    auto t0 = Clock::now();
    double c0 = thread_cpu_s();
    auto written = writer->write_kernels(rows);
    auto t1 = Clock::now();
    auto committed = written ? writer->commit() : written;
    auto t2 = Clock::now();
    double c2 = thread_cpu_s();
    if (!committed) {
      std::fprintf(stderr, "strata: %s\n", committed.error().message.c_str());
      return 1;
    }
    insert_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    total_s.push_back(std::chrono::duration<double>(t2 - t0).count());
    cpu_s.push_back(c2 - c0);
    std::filesystem::remove(path);
  }
  std::filesystem::remove_all(dir);

  double insert = median(insert_s), total = median(total_s), cpu = median(cpu_s);
  double per_million = total * 1e6 / static_cast<double>(rows_per_run);
  fmt::print("store_bulk_insert: {} rows x {} runs (median)\n", rows_per_run, runs);
  fmt::print("  insert:          {:.3f} s  ({:.0f} rows/s)\n", insert,
             static_cast<double>(rows_per_run) / insert);
  fmt::print("  insert + commit: {:.3f} s  ({:.0f} rows/s)\n", total,
             static_cast<double>(rows_per_run) / total);
  fmt::print("  CPU time of insert + commit: {:.3f} s\n", cpu);
  fmt::print("  time for 1M rows incl. commit: {:.3f} s; ratio to the 1 s budget: {:.2f}\n",
             per_million, per_million / 1.0);
  return 0;
}
