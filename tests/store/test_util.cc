#include "test_util.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace strata::store::testing {

RunInfo sample_run() {
  RunInfo run;
  run.verb = "bench";
  run.command = {"./app", "--size", "1 024", "quote'\"", "ünï"};
  run.working_directory = "/work/dir with space";
  run.start_ns = 1'760'000'000'123'456'789;
  run.end_ns = run.start_ns + 2'500'000'000;
  run.exit_status = 0;
  run.host = "testhost";
  run.tool_version = "0.1.0";
  return run;
}

std::vector<BenchRun> sample_bench_runs() {
  std::vector<BenchRun> runs;
  for (int i = 0; i < 4; ++i) {
    BenchRun run;
    run.label = i < 2 ? "A" : "B";
    run.command = {"python3", "bench.py", run.label};
    run.iteration = i % 2;
    run.warmup = i % 2 == 0;
    run.wall_ns = 1'000'000 + i;
    run.user_ns = 500'000 + i;
    run.sys_ns = 10'000 + i;
    run.max_rss_kb = 20'000 + i;
    if (i != 1) {  // run 1 as a trace from before the faults were recorded
      run.minor_faults = 3'000 + i;
      run.major_faults = i;
    }
    if (i == 3) {
      run.signal = 9;
    } else {
      run.exit_status = i;
    }
    run.metrics = {{"elapsed_ms", 12.5 + i}, {"items_per_s", 1e6 / (i + 1)}};
    runs.push_back(run);
  }
  return runs;
}

std::vector<KernelRow> write_sample_trace(const std::string& path, int kernels) {
  auto writer = TraceWriter::create(path, false);
  EXPECT_TRUE(writer.ok()) << writer.error().message;
  EXPECT_TRUE(writer->write_run(sample_run()).ok());
  auto bench = sample_bench_runs();
  EXPECT_TRUE(writer->write_bench_runs(bench).ok());
  int64_t mangled = writer->intern("_Z6matmulPfS_S_i").value();
  int64_t demangled = writer->intern("matmul(float*, float*, float*, int)").value();
  int64_t short_name = writer->intern("matmul").value();
  std::vector<KernelRow> rows;
  for (int i = 0; i < kernels; ++i) {
    KernelRow row;
    row.start = 1000 + i * 100;
    row.end = row.start + 50;
    row.device_id = i % 2;
    row.context_id = 1;
    row.stream_id = 7;
    row.correlation_id = 10 + i;
    row.global_pid = int64_t{1234} << 24;
    row.demangled_name = demangled;
    row.short_name = short_name;
    row.mangled_name = mangled;
    row.grid_x = 64 + i;
    row.grid_y = 2;
    row.block_x = 256;
    row.registers_per_thread = 40;
    row.static_shared_memory = 1024;
    row.dynamic_shared_memory = 2048;
    row.shared_memory_executed = 65536;
    row.local_memory_per_thread = 8;
    row.local_memory_total = 1 << 20;
    row.grid_id = 500 + i;
    if (i % 5 == 0) {
      row.graph_node_id = 900 + i;
      row.graph_id = 3;
    }
    rows.push_back(row);
  }
  EXPECT_TRUE(writer->write_kernels(rows).ok());
  EXPECT_TRUE(writer->add_counter("agent.records_dropped", 2).ok());
  EXPECT_TRUE(writer->add_counter("agent.records_dropped", 3).ok());
  auto committed = writer->commit();
  EXPECT_TRUE(committed.ok()) << committed.error().message;
  return rows;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void make_sqlite(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

}  // namespace strata::store::testing
