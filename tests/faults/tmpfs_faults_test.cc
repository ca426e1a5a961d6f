// A real full file system (needs root): each test mounts a 1 MiB tmpfs and
// has strata write its trace or export there, over an old file. ENOSPC must
// give exit 1 and one line, keep the old file, leave no temporary, and give
// back the space (nothing half-written still holds blocks). The binary's
// main() exits 77 (ctest SKIP_RETURN_CODE) when not root or when the mount
// is refused (a container without CAP_SYS_ADMIN).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "faults/fault_harness.h"
#include "faults/output_fixtures.h"
#include "util/temp_dir.h"

namespace strata::faults {
namespace {

constexpr const char* kOptions = "size=1m,mode=0755";

bool mount_tmpfs(const fs::path& where) {
  return ::mount("strata-faults", where.c_str(), "tmpfs", 0, kOptions) == 0;
}

uint64_t free_bytes(const fs::path& where) {
  struct statvfs st {};
  if (statvfs(where.c_str(), &st) != 0) return 0;
  return uint64_t{st.f_bavail} * st.f_frsize;
}

class TmpfsFaults : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    become_subreaper();
    if (GetParam() == "trace" && !have_trace_verb()) GTEST_SKIP() << "built without CUDA";
    mount_point_ = scratch_.path() / "full";
    fs::create_directory(mount_point_);
    ASSERT_TRUE(mount_tmpfs(mount_point_)) << "mount: " << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(mount_point_.c_str(), MNT_DETACH);
  }
  OutputVerb verb() const {
    for (auto& v : output_verbs()) {
      if (v.name == GetParam()) return v;
    }
    return {};
  }
  // Leaves about `left` bytes free on the mount with a filler file.
  void fill_leaving(uint64_t left) {
    uint64_t free = free_bytes(mount_point_);
    if (free > left) write_file(mount_point_ / "filler", std::string(free - left, 'x'));
  }

  test_util::TempDir scratch_{"strata-faults-root"};
  fs::path mount_point_;
  bool mounted_ = false;
};

TEST_P(TmpfsFaults, FullFileSystemKeepsOldFile) {
  const OutputVerb v = verb();
  const std::string name = v.name == "export" ? "out.json" : "out.sqlite";
  const fs::path old = mount_point_ / name;
  const std::string old_bytes = "the previous " + name + ", which a failed write must keep\n";
  write_file(old, old_bytes);
  // Room for strata's stdout-free work but not the file: an export's text
  // (a few KiB) or a trace's schema (64 KiB pages, well over 1 MiB).
  fill_leaving(v.name == "export" ? 1024 : 512 * 1024);
  const uint64_t free_before = free_bytes(mount_point_);

  Finished f = run({args_writing(v, name), mount_point_});
  EXPECT_EQ(failed_write_problems(f, old, old_bytes), "");
  EXPECT_EQ(free_bytes(mount_point_), free_before) << "space is still held by a partial file";
}

TEST_P(TmpfsFaults, DefaultNameOnFullFileSystemLeavesNoFile) {
  const OutputVerb v = verb();
  if (v.name == "export") GTEST_SKIP() << "export has no default name";
  std::vector<std::string> args;
  for (size_t i = 0; i < v.args.size(); ++i) {
    if (v.args[i] == "-o") {
      ++i;
      continue;
    }
    args.push_back(v.args[i]);
  }
  fill_leaving(64 * 1024);
  Finished f = run({args, mount_point_});
  EXPECT_TRUE(f.exited && f.code == 1) << f.describe() << "\n" << f.err;
  EXPECT_EQ(error_lines(f.err).size(), 1u) << f.err;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(mount_point_)) {
    const std::string name = entry.path().filename().string();
    if (name != "filler" && name != "target.pid") left.push_back(name);
  }
  EXPECT_EQ(left, std::vector<std::string>{}) << "files left by a run that could not write";
}

INSTANTIATE_TEST_SUITE_P(Faults, TmpfsFaults, ::testing::Values("cpu", "bench", "trace", "export"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace strata::faults

// Exit 77 (skipped) unless a tmpfs can be mounted here.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (::geteuid() != 0) {
    std::printf("faults-root: skipped: needs root to mount a small tmpfs\n");
    return 77;
  }
  strata::test_util::TempDir probe("strata-faults-probe");
  if (::mount("strata-faults", probe.path().c_str(), "tmpfs", 0, "size=1m") != 0) {
    std::printf("faults-root: skipped: mount tmpfs: %s\n", std::strerror(errno));
    return 77;
  }
  ::umount2(probe.path().c_str(), MNT_DETACH);
  return RUN_ALL_TESTS();
}
