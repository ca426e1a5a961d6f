// TempDir: a fresh private directory for one test (mkdtemp under $TMPDIR or
// /tmp, mode 0700), removed with everything in it when the object goes. The
// one scratch directory of strata's tests; a failed mkdtemp fails the test.
#pragma once

#include <filesystem>
#include <string>

namespace strata::test_util {

class TempDir {
 public:
  // `prefix` names the directory (prefix-XXXXXX), so a leftover says whose it is.
  explicit TempDir(const std::string& prefix = "strata-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace strata::test_util
