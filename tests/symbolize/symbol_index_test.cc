// SymbolIndex against what it replaces: for every address tried, the name
// and offset dwfl_module_addrinfo gives (symbolize/symbol_index.h). Tried
// on this test binary (C++: templates, inline copies, local symbols) and on
// the C library (many aliases at one address: weak and global names of one
// function, where the choice between them is tested).
#include "symbolize/symbol_index.h"

#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_util.h"

namespace strata::symbolize {
namespace {

struct Offline {
  Dwfl_Callbacks callbacks{};
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  char* debuginfo_path = nullptr;

  explicit Offline(const std::string& path) {
    callbacks.find_elf = dwfl_build_id_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.section_address = dwfl_offline_section_address;
    callbacks.debuginfo_path = &debuginfo_path;
    dwfl = dwfl_begin(&callbacks);
    if (dwfl != nullptr) module = dwfl_report_offline(dwfl, "", path.c_str(), -1);
    if (dwfl != nullptr) dwfl_report_end(dwfl, nullptr, nullptr);
  }
  ~Offline() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

// Every sized function symbol's first, middle and last byte, and addresses
// in between, checked against dwfl_module_addrinfo.
void expect_same_answers(const std::string& path) {
  Offline off(path);
  ASSERT_NE(off.module, nullptr) << path << ": " << dwfl_errmsg(-1);
  const SymbolIndex index(off.module);
  ASSERT_GT(index.size(), 100u) << path;
  std::vector<uint64_t> addresses;
  const int count = dwfl_module_getsymtab(off.module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    if (dwfl_module_getsym_info(off.module, i, &sym, &address, nullptr, nullptr, nullptr) ==
            nullptr ||
        GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0) {
      continue;
    }
    addresses.insert(addresses.end(), {address, address + sym.st_size / 2,
                                       address + sym.st_size - 1, address + sym.st_size});
  }
  ASSERT_GT(addresses.size(), 400u) << path;
  size_t named = 0;
  for (uint64_t address : addresses) {
    GElf_Off want_offset = 0, got_offset = 0;
    GElf_Sym want_sym, got_sym;
    const char* want = dwfl_module_addrinfo(off.module, address, &want_offset, &want_sym, nullptr,
                                            nullptr, nullptr);
    const char* got = index.lookup(address, &got_offset, &got_sym);
    ASSERT_EQ(want == nullptr, got == nullptr) << path << " at 0x" << std::hex << address;
    if (want == nullptr) continue;
    ++named;
    EXPECT_STREQ(got, want) << path << " at 0x" << std::hex << address;
    EXPECT_EQ(got_offset, want_offset) << path << " at 0x" << std::hex << address;
    EXPECT_EQ(got_sym.st_size, want_sym.st_size) << path << " at 0x" << std::hex << address;
  }
  EXPECT_GT(named, addresses.size() / 2) << path;
}

TEST(SymbolIndex, AnswersAsDwflModuleAddrinfoOnThisBinary) {
  expect_same_answers(STRATA_OTHER_BINARY);
}

TEST(SymbolIndex, AnswersAsDwflModuleAddrinfoOnTheCLibraryAndItsAliases) {
  const std::string libc = testing::libc_path();
  ASSERT_FALSE(libc.empty()) << "no libc.so among this process's libraries";
  expect_same_answers(libc);
}

TEST(SymbolIndex, AModuleWithoutSymbolsNamesNothing) {
  Offline off(STRATA_OTHER_BINARY);
  ASSERT_NE(off.module, nullptr);
  const SymbolIndex index(off.module);
  GElf_Off offset = 0;
  GElf_Sym sym;
  EXPECT_EQ(index.lookup(0, &offset, &sym), nullptr) << "below every symbol";
}

}  // namespace
}  // namespace strata::symbolize
