// common/private_dir.h: the one way the CLI makes the private directories
// its producers write spools into.
#include "common/private_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"

namespace strata {
namespace {

TEST(PrivateDirTest, IsMode0700UnderTheParentAndRemovedWithItsFiles) {
  std::string path;
  {
    auto dir = PrivateDir::make("strata-private-test", "/tmp");
    ASSERT_TRUE(dir) << dir.error().message;
    path = dir->path();
    EXPECT_EQ(path.rfind("/tmp/strata-private-test-", 0), 0u) << path;
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    std::ofstream(path + "/spool-1.bin") << "data";
    PrivateDir moved(std::move(*dir));
    EXPECT_EQ(moved.path(), path);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(PrivateDirTest, ParentDefaultsToTmpdirAndErrorsNameTheCause) {
  const char* saved = std::getenv("TMPDIR");
  std::string old = saved ? saved : "";
  setenv("TMPDIR", "/nonexistent-strata-parent", 1);
  EXPECT_EQ(temp_parent(), "/nonexistent-strata-parent");
  auto dir = make_private_dir("strata-private-test");
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "No such file or directory");
  setenv("TMPDIR", "", 1);
  EXPECT_EQ(temp_parent(), "/tmp");
  if (saved) {
    setenv("TMPDIR", old.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// A pid that is not running (a child already reaped).
long gone_pid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

// What a SIGKILLed strata leaves (its spool directory) is removed by the next
// one that makes a directory of that kind there; a live run's is kept, and so
// is anything not named as strata names them.
TEST(PrivateDirTest, RemovesOnlyTheDirectoriesOfDeadRunsOnThisHost) {
  auto parent = PrivateDir::make("strata-private-parent", "/tmp");
  ASSERT_TRUE(parent) << parent.error().message;
  auto live = make_private_dir("strata-run", parent->path());
  ASSERT_TRUE(live) << live.error().message;
  // The dead run's name: the live one's with a pid that is gone.
  std::string name = std::filesystem::path(*live).filename().string();
  std::string rest = name.substr(name.find('-', std::string("strata-run-").size()));
  std::string dead = parent->path() + "/strata-run-" + std::to_string(gone_pid()) + rest;
  ASSERT_EQ(mkdir(dead.c_str(), 0700), 0);
  std::ofstream(dead + "/spool-1.bin") << "left by a SIGKILLed run";
  std::string other_host =
      parent->path() + "/strata-run-" + std::to_string(gone_pid()) + "-00000000-abcdef";
  ASSERT_EQ(mkdir(other_host.c_str(), 0700), 0);
  std::string users = parent->path() + "/strata-run-notes";
  ASSERT_EQ(mkdir(users.c_str(), 0700), 0);

  auto next = make_private_dir("strata-run", parent->path());
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_FALSE(std::filesystem::exists(dead)) << "a dead run's directory was kept";
  EXPECT_TRUE(std::filesystem::exists(*live)) << "a live run's directory was removed";
  EXPECT_TRUE(std::filesystem::exists(users)) << "a directory strata did not make was removed";
  EXPECT_TRUE(std::filesystem::exists(other_host)) << "another host's directory was removed";
}

}  // namespace
}  // namespace strata
