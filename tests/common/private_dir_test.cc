// common/private_dir.h: the one way the CLI makes the private directories
// its producers write spools into.
#include "common/private_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

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
