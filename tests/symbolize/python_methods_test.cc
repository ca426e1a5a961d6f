#include "symbolize/python_methods.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_util.h"
#include "util/temp_dir.h"

namespace strata::symbolize {
namespace {

PythonMethods methods_of(const std::string& path) {
  auto file = ElfFile::open(path);
  EXPECT_TRUE(file.ok()) << path;
  if (!file.ok()) return {};
  return read_python_methods(**file);
}

PythonMethodNames names_of(const std::string& path) {
  return methods_of(path).symbols();
}

TEST(PythonMethods, ModuleTypeAndSpecTablesAreNamedAsCProfileNamesThem) {
  auto names = names_of(STRATA_PYTHON_METHODS_FIXTURE);
  EXPECT_EQ(names["fake_sorted"], "built-in method fakemod.sorted");
  EXPECT_EQ(names["fake_len"], "built-in method fakemod.len");
  EXPECT_EQ(names["fake_join"], "method 'join' of 'faketype' objects");
  EXPECT_EQ(names["fake_push"], "method 'push' of 'fakemod.Stack' objects");
  EXPECT_EQ(names["fake_join_wrapper"], "built-in method fakemod.join");
  EXPECT_EQ(names["PyFake_Join"], "built-in method fakemod.join")
      << "the function a tail-calling wrapper jumps to (through the PLT) is on the stacks";
  EXPECT_EQ(names.count("fake_helper"), 0u) << "a function in no table";
  EXPECT_EQ(names.size(), 6u);
}

// Ubuntu's and Debian's interpreters are stripped: no symbol for a static
// ml_meth. The CFI still says where each function starts, so an address
// inside builtin_sorted is still named.
TEST(PythonMethods, AStrippedFileIsNamedByAddress) {
  const uint64_t sorted_at = testing::symbol_value(STRATA_PYTHON_METHODS_FIXTURE, "fake_sorted");
  const uint64_t join_at = testing::symbol_value(STRATA_PYTHON_METHODS_FIXTURE, "PyFake_Join");
  const uint64_t helper_at = testing::symbol_value(STRATA_PYTHON_METHODS_FIXTURE, "fake_helper");
  ASSERT_NE(sorted_at, 0u);
  test_util::TempDir dir("strata-python-methods");
  const std::string stripped = dir.file("stripped.so");
  ASSERT_TRUE(testing::run_command("cp '" STRATA_PYTHON_METHODS_FIXTURE "' '" + stripped + "' && " +
                                   STRATA_OBJCOPY + std::string(" --strip-all '") + stripped +
                                   "'"));
  PythonMethods methods = methods_of(stripped);
  EXPECT_EQ(methods.by_symbol("fake_sorted"), nullptr) << "no symbols left";
  const std::string* sorted = methods.by_address(sorted_at + 1);
  ASSERT_NE(sorted, nullptr);
  EXPECT_EQ(*sorted, "built-in method fakemod.sorted");
  const std::string* join = methods.by_address(join_at);
  ASSERT_NE(join, nullptr) << "the tail-called function, an exported one";
  EXPECT_EQ(*join, "built-in method fakemod.join");
  EXPECT_EQ(methods.by_address(helper_at), nullptr) << "a function in no table";
}

TEST(PythonMethods, AFileWithoutThePythonApiHasNone) {
  // The test binary itself: no Py* symbol in its .dynsym.
  EXPECT_TRUE(names_of(STRATA_OTHER_BINARY).empty());
}

// The interpreter's own tables, where a CPython this machine has is found
// (pyenv's, built with symbols).
TEST(PythonMethods, CPythonBuiltinsWhereAnInterpreterIsInstalled) {
  const char* home = std::getenv("HOME");
  std::filesystem::path root = std::filesystem::path(home ? home : "/root") / ".pyenv/versions";
  int checked = 0;
  for (const char* version : {"3.8.18", "3.12.1", "3.13.0"}) {
    std::string minor = std::string(version).substr(0, std::string(version).rfind('.'));
    auto lib = root / version / "lib" / ("libpython" + minor + ".so.1.0");
    if (!std::filesystem::exists(lib)) continue;
    auto names = names_of(lib.string());
    EXPECT_EQ(names["builtin_sorted"], "built-in method builtins.sorted") << lib;
    EXPECT_EQ(names["unicode_join"], "method 'join' of 'str' objects") << lib;
    EXPECT_EQ(names["PyUnicode_Join"], "method 'join' of 'str' objects") << lib;
    EXPECT_EQ(names["list_append"], "method 'append' of 'list' objects") << lib;
    EXPECT_EQ(names["time_perf_counter"], "built-in method time.perf_counter") << lib;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no pyenv CPython with a shared libpython here";
}

}  // namespace
}  // namespace strata::symbolize
