#include <gtest/gtest.h>

#include "cli_runner.h"
#include "common/build_info.h"

namespace strata::testing {
namespace {

TEST(VersionCli, SaysWhichLayersThisBuildHas) {
  ScratchDir dir;
  auto r = run_strata("version", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(std::string("strata ") + build::kVersion), std::string::npos);
  if (build::kHaveCuda) {
    EXPECT_NE(r.out.find("CUDA"), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("not built: no CUDA toolkit"), std::string::npos) << r.out;
  }
}

TEST(VersionCli, UnknownVerbIsAUsageError) {
  ScratchDir dir;
  auto r = run_strata("frobnicate", dir.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("strata: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace strata::testing
