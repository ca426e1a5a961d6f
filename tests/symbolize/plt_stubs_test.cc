// PLT stubs named as objdump names them (symbolize/plt_stubs.h): checked
// against objdump's own labels on a fixture library with .plt stubs, the
// same library linked with a second PLT (.plt.sec), this test's own binary
// and the C library; looked up through SymbolIndex and Symbolizer; and read
// safely from mutated copies.
#include "symbolize/plt_stubs.h"

#include <gtest/gtest.h>
#include <libelf.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "symbolize/symbolizer.h"
#include "test_util.h"

namespace strata::symbolize {
namespace {

using Stubs = std::map<uint64_t, std::string>;  // address -> "name@plt"

// objdump's labels "0000000000001030 <strlen@plt>:" in .plt, .plt.sec and
// .plt.got, leaving out the ifunc slots it names "*ABS*+0x...@plt"
// (plt_stubs.h).
Stubs objdump_stubs(const std::string& path) {
  Stubs out;
  const std::string command =
      std::string(STRATA_OBJDUMP) + " -d -j .plt -j .plt.sec -j .plt.got " + path + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const size_t open = text.find(" <");
    if (open == std::string::npos || open == 0 || !text.ends_with("@plt>:")) continue;
    if (text.find_first_not_of("0123456789abcdef") != open) continue;
    std::string name = text.substr(open + 2, text.size() - open - 4);
    if (name.empty() || name[0] == '*') continue;
    out[std::stoull(text.substr(0, open), nullptr, 16)] = name;
  }
  pclose(pipe);
  return out;
}

std::vector<PltStub> read_stubs(const std::string& path) {
  std::vector<PltStub> out;
  elf_version(EV_CURRENT);
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  Elf* elf = elf_begin(fileno(f), ELF_C_READ, nullptr);
  out = plt_stubs(elf);
  elf_end(elf);
  std::fclose(f);
  return out;
}

Stubs our_stubs(const std::string& path) {
  Stubs out;
  for (const PltStub& stub : read_stubs(path)) out[stub.address] = stub.name;
  return out;
}

void expect_as_objdump(const std::string& path, size_t at_least) {
  const Stubs want = objdump_stubs(path);
  ASSERT_GE(want.size(), at_least) << path << ": objdump found too few stubs to compare";
  EXPECT_EQ(our_stubs(path), want) << path;
}

// strlen, memcpy, getpid in .plt (labs is inlined); getppid, whose address
// the library also takes, in .plt.got.
TEST(PltStubs, NamedAsObjdumpNamesThemInPltAndPltGot) {
  expect_as_objdump(STRATA_PLT_FIXTURE, 4);
  for (const char* fixture : {STRATA_PLT_FIXTURE, STRATA_PLT_FIXTURE_IBT}) {
    std::map<std::string, uint64_t> size_of;
    for (const PltStub& stub : read_stubs(fixture)) size_of[stub.name] = stub.size;
    EXPECT_EQ(size_of["strlen@plt"], kPltStubSize) << fixture;
    // 8 bytes, or 16 where IBT puts endbr64 first.
    EXPECT_TRUE(size_of["getppid@plt"] == 8 || size_of["getppid@plt"] == 16) << fixture;
  }
}

TEST(PltStubs, NamedAsObjdumpNamesThemInASecondPlt) {
  const Stubs stubs = objdump_stubs(STRATA_PLT_FIXTURE_IBT);
  ASSERT_FALSE(stubs.empty());
  // -z ibtplt put the stubs in .plt.sec: where they start differs from .plt's.
  EXPECT_NE(stubs.begin()->first, objdump_stubs(STRATA_PLT_FIXTURE).begin()->first);
  expect_as_objdump(STRATA_PLT_FIXTURE_IBT, 4);
}

TEST(PltStubs, NamedAsObjdumpNamesThemInThisBinaryAndTheCLibrary) {
  expect_as_objdump(STRATA_OTHER_BINARY, 20);
  const std::string libc = testing::libc_path();
  ASSERT_FALSE(libc.empty());
  expect_as_objdump(libc, 0);  // mostly ifunc slots, which stay unnamed
}

TEST(PltStubs, ASampleInAStubIsNamedByTheSymbolizer) {
  constexpr uint64_t kBase = 0x7f0000000000;
  AddressSpace space;
  space.pid = 4244;
  space.mappings = testing::mappings_for_file(STRATA_PLT_FIXTURE, kBase);
  const std::vector<PltStub> stubs = read_stubs(STRATA_PLT_FIXTURE);
  ASSERT_FALSE(stubs.empty());
  Symbolizer sym;
  std::set<std::string> named;
  for (const PltStub& stub : stubs) {
    for (uint64_t offset : {uint64_t{0}, stub.size - 1}) {
      auto frames = sym.symbolize(space, kBase + stub.address + offset, false);
      ASSERT_EQ(frames.size(), 1u);
      EXPECT_EQ(frames[0].function, stub.name) << "at +" << offset;
      EXPECT_EQ(frames[0].module_offset, stub.address + offset);
    }
    named.insert(stub.name);
  }
  EXPECT_TRUE(named.count("strlen@plt"));
  EXPECT_TRUE(named.count("getppid@plt"));
}

// The stubs come from untrusted bytes (any file a profiled process mapped):
// mutated and truncated copies must give an answer, never a crash or a read
// out of bounds (the sanitized build checks the latter).
TEST(PltStubsFuzz, MutatedFilesAreReadSafely) {
  std::ifstream in(STRATA_PLT_FIXTURE, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(original.size(), 1000u);
  elf_version(EV_CURRENT);
  std::mt19937_64 rng(20261206);
  size_t still_named = 0;
  for (int round = 0; round < 400; ++round) {
    std::string bytes = original;
    if (round % 10 == 9) bytes.resize(rng() % bytes.size());
    const int flips = 1 + static_cast<int>(rng() % 16);
    for (int i = 0; i < flips && !bytes.empty(); ++i) {
      bytes[rng() % bytes.size()] = static_cast<char>(round % 3 == 0 ? 0xff : rng());
    }
    Elf* elf = elf_memory(bytes.data(), bytes.size());
    for (const PltStub& stub : plt_stubs(elf)) {
      EXPECT_GT(stub.name.size(), 4u);
      EXPECT_EQ(stub.name.substr(stub.name.size() - 4), "@plt");
      still_named += stub.name == "strlen@plt";
    }
    if (elf != nullptr) elf_end(elf);
  }
  EXPECT_GT(still_named, 100u);  // most mutations miss the tables
}

}  // namespace
}  // namespace strata::symbolize
