// A full disk without root: RLIMIT_FSIZE in strata's process makes every
// write past the limit fail with EFBIG (SIGXFSZ ignored), as a full quota
// would. For cpu, bench, trace and export outputs: exit 1 with one line, the
// old file at the name intact, no temporary left, and with a default name no
// file at all. The limits hit the write early (the schema) and late (the
// rows, the export's text).
#include <gtest/gtest.h>

#include <algorithm>

#include "faults/fault_harness.h"
#include "faults/output_fixtures.h"
#include "util/temp_dir.h"

namespace strata::faults {
namespace {

class FileSizeFaults : public ::testing::TestWithParam<std::string> {
 protected:
  OutputVerb verb() const {
    for (auto& v : output_verbs()) {
      if (v.name == GetParam()) return v;
    }
    return {};
  }
  void SetUp() override {
    become_subreaper();
    if (GetParam() == "trace" && !have_trace_verb()) GTEST_SKIP() << "built without CUDA";
  }
};

// The size the verb's output takes without a limit.
uint64_t unlimited_size(const OutputVerb& v, const std::string& name) {
  test_util::TempDir dir("strata-faults");
  Finished f = run({args_writing(v, name), dir.path()});
  EXPECT_TRUE(f.exited && f.code == 0) << f.describe() << f.err;
  std::error_code ec;
  auto size = fs::file_size(dir.path() / name, ec);
  return ec ? 0 : size;
}

TEST_P(FileSizeFaults, OldFileKeptNoTempOneLine) {
  const OutputVerb v = verb();
  const std::string name = v.name == "export" ? "out.json" : "out.sqlite";
  const uint64_t full = unlimited_size(v, name);
  ASSERT_GT(full, 0u);
  // Early: the trace's schema or the export's first bytes. Late: half the
  // export; for trace, the finished size, past the schema but short of the
  // file's size before it is compacted, so the ingest's rows hit it.
  const bool late_ingest = v.name == "trace";
  for (uint64_t limit : {std::min<uint64_t>(4096, full / 4), late_ingest ? full : full / 2}) {
    SCOPED_TRACE("RLIMIT_FSIZE " + std::to_string(limit) + " of " + std::to_string(full) + " bytes");
    test_util::TempDir dir("strata-faults");
    const fs::path old = dir.path() / name;
    const std::string old_bytes = "the previous " + name + ", which a failed write must keep\n";
    write_file(old, old_bytes);
    Launch launch{args_writing(v, name), dir.path()};
    launch.file_size = limit;
    Finished f = run(launch);
    EXPECT_EQ(failed_write_problems(f, old, old_bytes), "");
    if (late_ingest && limit == full) {
      EXPECT_TRUE(fs::exists(dir.path() / "target.pid")) << "the limit did not hit the ingest";
    }
  }
}

TEST_P(FileSizeFaults, DefaultNameLeavesNoFile) {
  const OutputVerb v = verb();
  if (v.name == "export") GTEST_SKIP() << "export has no default name";
  std::vector<std::string> args;
  for (size_t i = 0; i < v.args.size(); ++i) {
    if (v.args[i] == "-o") {
      ++i;  // drop -o OUTPUT
      continue;
    }
    args.push_back(v.args[i]);
  }
  test_util::TempDir dir("strata-faults");
  Launch launch{args, dir.path()};
  launch.file_size = 4096;
  Finished f = run(launch);
  EXPECT_TRUE(f.exited && f.code == 1) << f.describe() << "\n" << f.err;
  EXPECT_EQ(error_lines(f.err).size(), 1u) << f.err;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().filename() != "target.pid") left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{}) << "files left by a run that could not write";
}

INSTANTIATE_TEST_SUITE_P(Faults, FileSizeFaults,
                         ::testing::Values("cpu", "bench", "trace", "export"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::faults
