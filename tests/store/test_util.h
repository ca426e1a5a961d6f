// Helpers shared by the store tests: a scratch directory per test and a small
// but complete trace to read back, damage or print.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "store/trace_db.h"

namespace strata::store::testing {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

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
