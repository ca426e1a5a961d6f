#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
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

// A writable segment at the top of the address space: its end wraps to 0.
// The scan must refuse the file, not loop over 2^61 words.
TEST(PythonMethodsFuzz, ASegmentWhoseEndWrapsIsRefused) {
  std::ifstream in(STRATA_PYTHON_METHODS_FIXTURE, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  Elf64_Ehdr eh;
  ASSERT_GE(bytes.size(), sizeof eh);
  std::memcpy(&eh, bytes.data(), sizeof eh);
  bool patched = false;
  for (int i = 0; i < eh.e_phnum && !patched; ++i) {
    Elf64_Phdr ph;
    const size_t at = eh.e_phoff + static_cast<size_t>(i) * eh.e_phentsize;
    std::memcpy(&ph, bytes.data() + at, sizeof ph);
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W)) continue;
    ph.p_vaddr = 0xfffffffffffffff8ull;
    ph.p_memsz = 16;
    ph.p_filesz = 0;
    std::memcpy(bytes.data() + at, &ph, sizeof ph);
    patched = true;
  }
  ASSERT_TRUE(patched);
  test_util::TempDir dir("strata-python-methods");
  const std::string path = dir.file("wrapped.so");
  std::ofstream(path, std::ios::binary) << bytes;
  auto file = ElfFile::open(path);
  if (!file.ok()) return;  // refused earlier: as good
  EXPECT_EQ(read_python_methods(**file).size(), 0u);
}

}  // namespace
}  // namespace strata::symbolize
