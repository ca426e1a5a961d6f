#include "symbolize/perf_map.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

namespace strata::symbolize {
namespace {

TEST(PerfMap, ParsesCpythonLines) {
  PerfMap map = PerfMap::parse(
      "7f3a10000000 b py::fib:/tmp/fib.py\n"
      "7f3a1000000b b py::<module>:/tmp/fib.py\n"
      "7f3a10000016 B py::Foo.bar baz:/tmp/with space.py\r\n");
  EXPECT_EQ(map.entry_count(), 3u);
  EXPECT_EQ(map.bad_lines(), 0u);
  ASSERT_NE(map.find(0x7f3a10000000), nullptr);
  EXPECT_EQ(map.find(0x7f3a10000000)->name, "py::fib:/tmp/fib.py");
  EXPECT_EQ(map.find(0x7f3a1000000a)->name, "py::fib:/tmp/fib.py");
  EXPECT_EQ(map.find(0x7f3a1000000b)->name, "py::<module>:/tmp/fib.py");
  EXPECT_EQ(map.find(0x7f3a10000016)->name, "py::Foo.bar baz:/tmp/with space.py");
  EXPECT_EQ(map.find(0x7f3a10000016)->size, 11u);
  EXPECT_EQ(map.find(0x7f3a10000021), nullptr);
  EXPECT_EQ(map.find(0x7f3a0fffffff), nullptr);
  EXPECT_EQ(map.find(0), nullptr);
}

TEST(PerfMap, LaterEntriesWin) {
  PerfMap map = PerfMap::parse(
      "1000 100 old\n"
      "1040 10 middle\n"  // splits old into two pieces
      "1000 100 again\n"  // covers everything: wins everywhere
      "10f0 20 tail\n");  // reaches past the end
  EXPECT_EQ(map.find(0x1000)->name, "again");
  EXPECT_EQ(map.find(0x1045)->name, "again");
  EXPECT_EQ(map.find(0x10ef)->name, "again");
  EXPECT_EQ(map.find(0x10f0)->name, "tail");
  EXPECT_EQ(map.find(0x110f)->name, "tail");
  EXPECT_EQ(map.find(0x1110), nullptr);
  PerfMap split = PerfMap::parse("1000 100 old\n1040 10 middle\n");
  EXPECT_EQ(split.find(0x103f)->name, "old");
  EXPECT_EQ(split.find(0x1040)->name, "middle");
  EXPECT_EQ(split.find(0x104f)->name, "middle");
  EXPECT_EQ(split.find(0x1050)->name, "old");
  // The entry keeps its own start and size for trampoline offsets.
  EXPECT_EQ(split.find(0x1050)->start, 0x1000u);
}

TEST(PerfMap, CountsGarbage) {
  PerfMap map = PerfMap::parse(
      "\n"
      "zzzz 10 bad-start\n"
      "1000 nope bad-size\n"
      "1000 0 zero-size\n"
      "ffffffffffffffff 10 wraps\n"
      "12345678901234567 10 too-long\n"
      "2000\n"
      "2000 10\n"  // a region without a name is still a region
      "0x3000 10 prefixed\n");
  EXPECT_EQ(map.entry_count(), 1u);
  EXPECT_EQ(map.bad_lines(), 7u);
  ASSERT_NE(map.find(0x2005), nullptr);
  EXPECT_EQ(map.find(0x2005)->name, "");
}

TEST(PerfMap, ReadFileNamesTheFile) {
  Result<PerfMap> missing = PerfMap::read_file("/nonexistent/perf-1.map");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/perf-1.map"), std::string::npos);
}

// Randomized mutations of a valid map: never a crash, and lookups agree
// with a brute-force replay of the parsed entries.
TEST(PerfMap, MutationFuzz) {
  const char* env = std::getenv("STRATA_FUZZ_SEED");
  uint64_t seed =
      env != nullptr
          ? std::strtoull(env, nullptr, 10)
          : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::printf("perf map fuzz seed %llu (STRATA_FUZZ_SEED=%llu reproduces)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::string base;
  for (int i = 0; i < 40; ++i) {
    char line[96];
    std::snprintf(line, sizeof(line), "%llx %x py::f%d:/tmp/m%d.py\n",
                  0x7f0000000000ull + (rng() % 64) * 8, 1 + static_cast<unsigned>(rng() % 40), i,
                  i % 5);
    base += line;
  }
  const char kAlphabet[] = "0123456789abcdefABCDEFxyz \t\n\r:py\xff";
  for (int iter = 0; iter < 2000; ++iter) {
    std::string text = base;
    int mutations = 1 + static_cast<int>(rng() % 8);
    for (int m = 0; m < mutations && !text.empty(); ++m) {
      size_t at = rng() % text.size();
      switch (rng() % 5) {
        case 0:
          text[at] = static_cast<char>(text[at] ^ (1 << (rng() % 8)));
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        case 2:
          text.insert(at, 1, kAlphabet[rng() % (sizeof(kAlphabet) - 1)]);
          break;
        case 3:
          text.resize(at);
          break;
        case 4:
          text.insert(at, text.substr(rng() % text.size(), rng() % 64));
          break;
      }
    }
    PerfMap map = PerfMap::parse(text);
    const auto& entries = map.entries();
    for (int probe = 0; probe < 20; ++probe) {
      uint64_t addr = entries.empty() || rng() % 4 == 0
                          ? rng()
                          : entries[rng() % entries.size()].start + rng() % 48;
      const PerfMapEntry* want = nullptr;
      for (const PerfMapEntry& e : entries) {
        if (addr >= e.start && addr - e.start < e.size) want = &e;  // the last one wins
      }
      ASSERT_EQ(map.find(addr), want) << "iteration " << iter << " addr " << addr;
    }
  }
}

}  // namespace
}  // namespace strata::symbolize
