// Offline symbolization of a program that is not loaded: the test program
// (testprog.cc) laid out at a fixed base, then stripped or with its debug
// information split off (.gnu_debuglink).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "symbolize/symbolizer.h"
#include "test_util.h"
#include "util/temp_dir.h"

namespace strata::symbolize {
namespace {

using testing::mappings_for_file;
using testing::run_command;
using testing::symbol_value;

constexpr uint64_t kBase = 0x555555554000;

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prog_c_ = symbol_value(STRATA_TESTPROG, "prog_c");
    ASSERT_NE(prog_c_, 0u);
  }
  AddressSpace space_for(const std::string& path) {
    AddressSpace space;
    space.pid = 4242;
    space.mappings = mappings_for_file(path, kBase);
    return space;
  }
  std::string copy(const std::string& name) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(run_command("cp '" STRATA_TESTPROG "' '" + path + "'"));
    return path;
  }

  test_util::TempDir tmp_{"strata-sym"};
  std::string dir_ = tmp_.path().string();
  uint64_t prog_c_ = 0;
};

TEST_F(FileTest, UnstrippedHasNameAndLine) {
  AddressSpace space = space_for(STRATA_TESTPROG);
  Symbolizer sym;
  std::vector<Frame> frames = sym.symbolize(space, kBase + prog_c_, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "prog_c");
  EXPECT_TRUE(frames[0].has_symbol);
  EXPECT_EQ(frames[0].module_offset, prog_c_);
  int want = testing::marker_line(STRATA_TESTPROG_SOURCE, "prog_c");
  EXPECT_NE(frames[0].file.find("testprog.cc"), std::string::npos);
  EXPECT_LE(std::abs(frames[0].line - want), 2);
}

TEST_F(FileTest, StrippedBinaryGivesModulePlusOffset) {
  std::string path = copy("prog.stripped");
  ASSERT_TRUE(run_command(STRATA_OBJCOPY " --strip-all '" + path + "'"));
  AddressSpace space = space_for(path);
  Symbolizer sym;
  std::vector<Frame> frames = sym.symbolize(space, kBase + prog_c_ + 1, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(frames[0].has_symbol);
  char want[64];
  std::snprintf(want, sizeof(want), "prog.stripped+0x%llx",
                static_cast<unsigned long long>(prog_c_ + 1));
  EXPECT_EQ(frames[0].function, want);
  EXPECT_EQ(frames[0].module, path);
  EXPECT_EQ(frames[0].file, "");
}

TEST_F(FileTest, DebuglinkBesideTheBinary) {
  std::string path = copy("prog");
  std::string debug = dir_ + "/prog.debug";
  ASSERT_TRUE(run_command(STRATA_OBJCOPY " --only-keep-debug '" + path + "' '" + debug + "'"));
  ASSERT_TRUE(run_command(
      "cd '" + dir_ + "' && " STRATA_OBJCOPY " --strip-all --add-gnu-debuglink=prog.debug prog"));
  AddressSpace space = space_for(path);
  Symbolizer sym;
  std::vector<Frame> frames = sym.symbolize(space, kBase + prog_c_, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "prog_c");
  EXPECT_NE(frames[0].file.find("testprog.cc"), std::string::npos);
  EXPECT_GT(frames[0].line, 0);
}

TEST_F(FileTest, DebuglinkInAGivenDebugDirectory) {
  std::string bin_dir = dir_ + "/bin";
  std::string debug_dir = dir_ + "/debug";
  ASSERT_TRUE(run_command("mkdir -p '" + bin_dir + "' '" + debug_dir + "'"));
  std::string path = bin_dir + "/prog";
  ASSERT_TRUE(run_command("cp '" STRATA_TESTPROG "' '" + path + "'"));
  ASSERT_TRUE(
      run_command(STRATA_OBJCOPY " --only-keep-debug '" + path + "' '" + bin_dir + "/prog.debug'"));
  ASSERT_TRUE(run_command("cd '" + bin_dir +
                          "' && " STRATA_OBJCOPY
                          " --strip-all --add-gnu-debuglink=prog.debug prog && mv prog.debug '" +
                          debug_dir + "/'"));
  AddressSpace space = space_for(path);
  {
    Symbolizer without;
    std::vector<Frame> frames = without.symbolize(space, kBase + prog_c_, false);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_FALSE(frames[0].has_symbol) << frames[0].function;
  }
  SymbolizerOptions options;
  options.debug_dirs = {debug_dir};
  Symbolizer sym(options);
  std::vector<Frame> frames = sym.symbolize(space, kBase + prog_c_, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "prog_c");
  EXPECT_NE(frames[0].file.find("testprog.cc"), std::string::npos);
}

TEST_F(FileTest, MismatchedDebugFileIsRejected) {
  // A debug file of another build (different build id) under the right name.
  std::string path = copy("prog");
  ASSERT_TRUE(
      run_command(STRATA_OBJCOPY " --only-keep-debug '" + path + "' '" + dir_ + "/prog.debug'"));
  ASSERT_TRUE(run_command(
      "cd '" + dir_ + "' && " STRATA_OBJCOPY " --strip-all --add-gnu-debuglink=prog.debug prog"));
  // Replace the debug file with the debug info of a binary with another id.
  ASSERT_TRUE(run_command(STRATA_OBJCOPY " --only-keep-debug '" STRATA_OTHER_BINARY "' '" + dir_ +
                          "/prog.debug'"));
  AddressSpace space = space_for(path);
  Symbolizer sym;
  std::vector<Frame> frames = sym.symbolize(space, kBase + prog_c_, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(frames[0].has_symbol) << frames[0].function;
}

TEST_F(FileTest, StaleBuildIdIsCountedNotTrusted) {
  AddressSpace space = space_for(STRATA_TESTPROG);
  for (Mapping& m : space.mappings) m.build_id = "00112233445566778899aabbccddeeff00112233";
  Symbolizer sym;
  std::vector<Frame> frames = sym.symbolize(space, kBase + prog_c_, false);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_FALSE(frames[0].has_symbol);
  EXPECT_EQ(sym.stats().modules_stale, 1u);
}

TEST_F(FileTest, MissingFileIsNotFatal) {
  AddressSpace space = space_for(STRATA_TESTPROG);
  for (Mapping& m : space.mappings) m.path = dir_ + "/gone.so";
  Symbolizer sym;
  std::vector<Frame> frames = sym.symbolize(space, kBase + prog_c_, true);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_NE(frames[0].function.find("gone.so+0x"), std::string::npos);
  EXPECT_EQ(sym.stats().modules_missing, 1u);
}

TEST(Demangle, ItaniumNames) {
  EXPECT_EQ(demangle("_ZN6strata9symbolize4testEv"), "strata::symbolize::test()");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
}

}  // namespace
}  // namespace strata::symbolize
