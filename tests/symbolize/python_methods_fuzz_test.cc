#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "symbolize/python_methods.h"
#include "util/temp_dir.h"

namespace strata::symbolize {
namespace {

// The scan reads untrusted bytes (any file a profiled process mapped):
// mutated and truncated copies of the fixture must give an answer, never a
// crash or a read out of bounds (the sanitized build checks the latter).
TEST(PythonMethodsFuzz, MutatedFilesAreReadSafely) {
  std::ifstream in(STRATA_PYTHON_METHODS_FIXTURE, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(original.size(), 1000u);
  test_util::TempDir dir("strata-python-methods");
  std::mt19937_64 rng(20261203);
  size_t still_named = 0;
  for (int round = 0; round < 300; ++round) {
    std::string bytes = original;
    if (round % 10 == 9) bytes.resize(rng() % bytes.size());
    int flips = 1 + static_cast<int>(rng() % 16);
    for (int i = 0; i < flips && !bytes.empty(); ++i) {
      size_t at = rng() % bytes.size();
      bytes[at] = static_cast<char>(round % 3 == 0 ? 0xff : rng());
    }
    std::string path = dir.file("m" + std::to_string(round) + ".so");
    std::ofstream(path, std::ios::binary) << bytes;
    auto file = ElfFile::open(path);
    if (!file.ok()) continue;
    auto names = read_python_methods(**file).symbols();
    for (const auto& [symbol, name] : names) {
      EXPECT_FALSE(symbol.empty());
      EXPECT_LT(name.size(), 500u);
    }
    still_named += names.count("fake_sorted");
  }
  // Most mutations miss the tables: the scan still finds them then.
  EXPECT_GT(still_named, 100u);
}

}  // namespace
}  // namespace strata::symbolize
