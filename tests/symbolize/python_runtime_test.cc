// Finding a CPython's _PyRuntime and version in its ELF file
// (symbolize/python_runtime.h), on the interpreters this machine has:
// Debian's stripped python3.11 (what CI has) and pyenv's shared libpython.
#include "symbolize/python_runtime.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace strata::symbolize {
namespace {

TEST(PythonRuntime, DebiansStrippedInterpreterKeepsItsRuntimeSymbol) {
  const std::string python = "/usr/bin/python3.11";
  if (access(python.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << python;
  // ET_EXEC: the address is the symbol's, whatever the mapping.
  auto found = find_python_runtime(python, 0x400000, 0);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->problem, "");
  EXPECT_EQ(found->major, 3);
  EXPECT_EQ(found->minor, 11);  // from Py_Version
  EXPECT_NE(found->address, 0u);
}

TEST(PythonRuntime, ASharedLibpythonIsFoundAtItsLoadBias) {
  const char* home = std::getenv("HOME");
  const std::string lib = std::string(home ? home : "") +
                          "/.pyenv/versions/3.9.18/lib/libpython3.9.so.1.0";
  if (access(lib.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << lib;
  auto at_zero = find_python_runtime(lib, 0x7f0000000000, 0);
  ASSERT_TRUE(at_zero.has_value());
  EXPECT_EQ(at_zero->minor, 9);  // from the name: 3.9 has no Py_Version
  auto moved = find_python_runtime(lib, 0x7f0000100000, 0);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->address - at_zero->address, 0x100000u);
}

TEST(PythonRuntime, OtherFilesAreNoPython) {
  EXPECT_FALSE(is_python_module_name("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(is_python_module_name("/usr/bin/python3.11"));
  EXPECT_TRUE(is_python_module_name("/opt/lib/libpython3.8.so.1.0"));
  EXPECT_FALSE(find_python_runtime("/bin/true", 0x400000, 0).has_value());
  EXPECT_FALSE(find_python_runtime("/no/such/python3.9", 0x400000, 0).has_value());
}

}  // namespace
}  // namespace strata::symbolize
