#include "analysis/cpu_sort.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

CpuSortKeys keys(const char* text) {
  auto parsed = parse_cpu_sort(text);
  EXPECT_TRUE(parsed) << text << ": " << (parsed ? "" : parsed.error().message);
  return parsed ? *parsed : CpuSortKeys{};
}

std::string error(const char* text) {
  auto parsed = parse_cpu_sort(text);
  EXPECT_FALSE(parsed) << text;
  return parsed ? "" : parsed.error().message;
}

TEST(CpuSort, EveryPstatsKeyAndAlias) {
  EXPECT_EQ(keys("calls"), CpuSortKeys{CpuSort::kNcalls});
  EXPECT_EQ(keys("ncalls"), CpuSortKeys{CpuSort::kNcalls});
  EXPECT_EQ(keys("pcalls"), CpuSortKeys{CpuSort::kPcalls});
  EXPECT_EQ(keys("time"), CpuSortKeys{CpuSort::kTottime});
  EXPECT_EQ(keys("tottime"), CpuSortKeys{CpuSort::kTottime});
  EXPECT_EQ(keys("cumulative"), CpuSortKeys{CpuSort::kCumtime});
  EXPECT_EQ(keys("cumtime"), CpuSortKeys{CpuSort::kCumtime});
  EXPECT_EQ(keys("filename"), CpuSortKeys{CpuSort::kFile});
  EXPECT_EQ(keys("module"), CpuSortKeys{CpuSort::kFile});
  EXPECT_EQ(keys("line"), CpuSortKeys{CpuSort::kLine});
  EXPECT_EQ(keys("name"), CpuSortKeys{CpuSort::kName});
  EXPECT_EQ(keys("nfl"), CpuSortKeys{CpuSort::kNfl});
  EXPECT_EQ(keys("stdname"), CpuSortKeys{CpuSort::kStdname});
  EXPECT_EQ(keys("samples"), CpuSortKeys{CpuSort::kSamples});
}

TEST(CpuSort, UniquePrefixesAndLegacyIntegers) {
  EXPECT_EQ(keys("cum"), CpuSortKeys{CpuSort::kCumtime});  // cumulative and cumtime agree
  EXPECT_EQ(keys("file"), CpuSortKeys{CpuSort::kFile});
  EXPECT_EQ(keys("tot"), CpuSortKeys{CpuSort::kTottime});
  EXPECT_EQ(keys("std"), CpuSortKeys{CpuSort::kStdname});
  EXPECT_EQ(keys("-1"), CpuSortKeys{CpuSort::kStdname});
  EXPECT_EQ(keys("0"), CpuSortKeys{CpuSort::kNcalls});
  EXPECT_EQ(keys("1"), CpuSortKeys{CpuSort::kTottime});
  EXPECT_EQ(keys("2"), CpuSortKeys{CpuSort::kCumtime});
}

TEST(CpuSort, SeveralKeysInOrder) {
  EXPECT_EQ(keys("cumulative,name"), (CpuSortKeys{CpuSort::kCumtime, CpuSort::kName}));
  EXPECT_EQ(sort_description(keys("cumulative,name")), "cumulative time, function name");
  EXPECT_EQ(sort_description(keys("time")), "internal time");
  EXPECT_EQ(sort_description(keys("pcalls,nfl")), "primitive call count, name/file/line");
}

TEST(CpuSort, RefusesUnknownAmbiguousAndEmptyKeysByName) {
  EXPECT_NE(error("percall").find("unknown --sort key 'percall'"), std::string::npos);
  // "c" begins calls, cumtime and cumulative: two meanings.
  EXPECT_NE(error("c").find("ambiguous --sort key 'c' (calls, cumtime, cumulative)"),
            std::string::npos);
  EXPECT_NE(error("n").find("ambiguous"), std::string::npos);  // ncalls, name, nfl
  EXPECT_NE(error("time,").find("unknown --sort key ''"), std::string::npos);
  EXPECT_NE(error("").find("unknown --sort key ''"), std::string::npos);
  EXPECT_NE(error("3").find("unknown"), std::string::npos);
}

}  // namespace
}  // namespace strata::analysis
