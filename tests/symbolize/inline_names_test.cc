// Inlined frames are labelled as the demangled symbol of the same function's
// out-of-line copy (symbolize/dwarf_names.h), also where GCC wrote no linkage
// name (members and free functions of an anonymous namespace).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "symbolize/symbolizer.h"
#include "test_util.h"

namespace strata::symbolize {
namespace {

using testing::FunctionSymbol;
using testing::function_symbols;
using testing::mappings_for_file;

constexpr uint64_t kBase = 0x555555554000;

const char* const kInlined[] = {
    "outer::(anonymous namespace)::Rng::next()",
    "outer::(anonymous namespace)::Rng::below(unsigned long) const",
    "outer::(anonymous namespace)::weigh(std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> > const&, unsigned long)",
    "d1::d2::d3::d4::d5::d6::d7::d8::d9::d10::d11::d12::d13::d14::d15::d16::d17::d18::d19::"
    "(anonymous namespace)::Deep::twice(int)",
};

constexpr const char* kNextSymbol = "_ZN5outer12_GLOBAL__N_13Rng4nextEv";

class InlineNames : public ::testing::Test {
 protected:
  void SetUp() override {
    space_.pid = 4243;
    space_.mappings = mappings_for_file(STRATA_INLINE_NAMES_FIXTURE, kBase);
    for (const FunctionSymbol& s : function_symbols(STRATA_INLINE_NAMES_FIXTURE)) {
      if (s.name == "drive") drive_ = s;
      symbols_.insert(demangle(s.name));
    }
    ASSERT_GT(drive_.size, 0u);
  }
  // The labels of the inlined frames at every byte of drive().
  std::set<std::string> inlined_in_drive(Symbolizer& sym, const AddressSpace& space) {
    std::set<std::string> out;
    for (uint64_t off = 0; off < drive_.size; ++off) {
      for (const Frame& f : sym.symbolize(space, kBase + drive_.value + off, false)) {
        if (f.inlined) out.insert(f.function);
      }
    }
    return out;
  }

  AddressSpace space_;
  FunctionSymbol drive_;
  std::set<std::string> symbols_;  // demangled
};

TEST_F(InlineNames, InlinedFramesKeepTheirQualifiedNames) {
  Symbolizer sym;
  std::set<std::string> inlined = inlined_in_drive(sym, space_);
  std::string seen;
  for (const std::string& name : inlined) seen += "\n  " + name;
  SCOPED_TRACE("inlined frames in drive():" + seen);
  for (const char* name : kInlined) EXPECT_EQ(inlined.count(name), 1u) << name;
  // Each reads exactly as a symbol of the file: one label per function,
  // inlined or called.
  for (const char* name : kInlined) EXPECT_EQ(symbols_.count(name), 1u) << name;
  // The constructor, inlined everywhere (no symbol), is spelled as its
  // symbol would demangle.
  EXPECT_EQ(inlined.count("outer::(anonymous namespace)::Rng::Rng(unsigned long)"), 1u);
}

TEST_F(InlineNames, TheOutOfLineCopyReadsTheSame) {
  Symbolizer sym;
  for (const char* name : kInlined) {
    uint64_t value = 0;
    for (const FunctionSymbol& s : function_symbols(STRATA_INLINE_NAMES_FIXTURE)) {
      if (demangle(s.name) == name) value = s.value;
    }
    ASSERT_NE(value, 0u) << name << " has no out-of-line copy";
    std::vector<Frame> frames = sym.symbolize(space_, kBase + value, false);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames.back().function, name);
    EXPECT_FALSE(frames.back().inlined);
  }
}

// Without symbols (drive's and Rng::next's taken out of .symtab) the names
// come from DWARF alone and read the same.
TEST_F(InlineNames, DebugInfoAloneGivesTheSameLabels) {
  uint64_t next = testing::symbol_value(STRATA_INLINE_NAMES_FIXTURE, kNextSymbol);
  ASSERT_NE(next, 0u);
  std::string copy = ::testing::TempDir() + "/inline_names_nosym";
  ASSERT_TRUE(testing::run_command("cp '" STRATA_INLINE_NAMES_FIXTURE "' '" + copy + "' && " +
                                   STRATA_OBJCOPY " --strip-symbol=drive --strip-symbol=" +
                                   kNextSymbol + " '" + copy + "'"));
  ASSERT_EQ(testing::symbol_value(copy, kNextSymbol), 0u);
  AddressSpace space;
  space.pid = 4244;
  space.mappings = mappings_for_file(copy, kBase);
  Symbolizer sym;
  std::vector<Frame> frames = sym.symbolize(space, kBase + drive_.value, false);
  ASSERT_FALSE(frames.empty());
  // drive is extern "C": external, with no linkage name; its symbol is the
  // bare name, and so is the label DWARF gives it.
  EXPECT_EQ(frames.back().function, "drive");
  EXPECT_TRUE(frames.back().has_symbol);
  frames = sym.symbolize(space, kBase + next, false);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().function, kInlined[0]);
  EXPECT_EQ(inlined_in_drive(sym, space).count(kInlined[0]), 1u);
}

}  // namespace
}  // namespace strata::symbolize
