// TempDir: a fresh private directory per object, gone with its contents
// when the object goes.
#include "util/temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace strata::test_util {
namespace {

TEST(TempDir, IsPrivateFreshAndRemovedWithItsFiles) {
  std::filesystem::path kept;
  {
    TempDir a("strata-util-test");
    TempDir b("strata-util-test");
    kept = a.path();
    ASSERT_TRUE(std::filesystem::is_directory(a.path()));
    EXPECT_NE(a.path(), b.path());
    EXPECT_EQ(a.path().filename().string().rfind("strata-util-test-", 0), 0u) << a.path();
    struct stat st = {};
    ASSERT_EQ(stat(a.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(a.file("x.bin"), (a.path() / "x.bin").string());
    std::filesystem::create_directory(a.path() / "sub");
    std::ofstream(a.path() / "sub" / "f") << "data";
    EXPECT_TRUE(std::filesystem::is_empty(b.path()));
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

}  // namespace
}  // namespace strata::test_util
