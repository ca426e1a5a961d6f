// Helpers shared by the store tests: a scratch directory per test and a small
// but complete trace to read back, damage or print.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "store/trace_db.h"
#include "util/temp_dir.h"

namespace strata::store::testing {

using strata::test_util::TempDir;

RunInfo sample_run();
std::vector<BenchRun> sample_bench_runs();

// Writes and commits a trace holding sample_run(), sample_bench_runs(),
// `kernels` kernel rows and one counter; returns the kernel rows written.
std::vector<KernelRow> write_sample_trace(const std::string& path, int kernels = 50);

std::string read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

// Creates an SQLite file at `path` by running `sql` on it.
void make_sqlite(const std::string& path, const std::string& sql);

}  // namespace strata::store::testing
