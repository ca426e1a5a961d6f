#include "import/cpu/python_frames.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "util/temp_dir.h"

namespace strata::import {
namespace {

TEST(SplitPythonName, SplitsQualnameAndFile) {
  std::string function;
  std::string file;
  ASSERT_TRUE(split_python_name("py::Model.forward:/src/model.py", &function, &file));
  EXPECT_EQ(function, "Model.forward");
  EXPECT_EQ(file, "/src/model.py");
}

TEST(SplitPythonName, NameWithoutFileClearsTheFile) {
  std::string function;
  std::string file = "stale";
  ASSERT_TRUE(split_python_name("py::main", &function, &file));
  EXPECT_EQ(function, "main");
  EXPECT_EQ(file, "");
}

TEST(SplitPythonName, RejectsNativeNames) {
  std::string function = "kept";
  std::string file = "kept";
  EXPECT_FALSE(split_python_name("std::vector<int>::push_back", &function, &file));
  EXPECT_FALSE(split_python_name("py:x", &function, &file));
  EXPECT_EQ(function, "kept");
  EXPECT_EQ(file, "kept");
}

TEST(IsPythonFrame, PerfMapModulesOnly) {
  EXPECT_TRUE(is_python_frame({"work", "a.py", 3, "[perf-42.map]", 0, false}));
  EXPECT_FALSE(is_python_frame({"main", "", 0, "/usr/bin/python3.12", 0x10, false}));
}

TEST(IsSystemLibrary, CLibraryLoaderAndMath) {
  EXPECT_TRUE(is_system_library("/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(is_system_library("/lib/libc-2.31.so"));
  EXPECT_TRUE(is_system_library("/lib64/ld-linux-x86-64.so.2"));
  EXPECT_TRUE(is_system_library("libm.so.6"));
  EXPECT_TRUE(is_system_library("/lib/libpthread.so.0"));
  EXPECT_FALSE(is_system_library("/usr/lib/libcrypto.so.3"));
  EXPECT_FALSE(is_system_library("/usr/lib/libpython3.12.so.1.0"));
  EXPECT_FALSE(is_system_library("/opt/libc.so.6/other.so"));
}

class PythonSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream out(path_);
    out << "import os\n"               // 1
           "class Model:\n"            // 2
           "    def forward(self):\n"  // 3
           "        pass\n"            // 4
           "async  def  fetch():\n"    // 5: no match, two spaces after async
           "async def fetch():\n"      // 6
           "def forward_all():\n"      // 7
           "def helper (x):\n"         // 8
           "def forward(x):\n";        // 9
  }
  test_util::TempDir dir_{"strata-python-sources"};
  std::string path_ = dir_.file("app.py");
};

TEST_F(PythonSourcesTest, FindsTheDefLineOfTheLastNamePart) {
  PythonSources sources;
  EXPECT_EQ(sources.def_line(path_, "Model.forward"), 3);  // the first def forward
  EXPECT_EQ(sources.def_line(path_, "Model"), 2);
  EXPECT_EQ(sources.def_line(path_, "fetch"), 6);
  EXPECT_EQ(sources.def_line(path_, "helper"), 8);
  EXPECT_EQ(sources.def_line(path_, "forward_all"), 7);
}

TEST_F(PythonSourcesTest, ZeroWhenNotFoundOrUnreadable) {
  PythonSources sources;
  EXPECT_EQ(sources.def_line(path_, "missing"), 0);
  EXPECT_EQ(sources.def_line(path_, "os"), 0);  // an import is no definition
  EXPECT_EQ(sources.def_line("<frozen runpy>", "_run_module_as_main"), 0);
}

TEST_F(PythonSourcesTest, AnswersAreCached) {
  PythonSources sources;
  EXPECT_EQ(sources.def_line(path_, "helper"), 8);
  unlink(path_.c_str());
  EXPECT_EQ(sources.def_line(path_, "helper"), 8);
  EXPECT_EQ(sources.def_line(path_, "Model"), 0);  // not asked before: the file is gone
}

class PythonStackFolderTest : public ::testing::Test {
 protected:
  analysis::FrameId frame(const std::string& function, const std::string& module) {
    return frames_.intern({function, "", 0, module, 0, false});
  }
  std::vector<std::string> names(const std::vector<analysis::FrameId>& stack) const {
    std::vector<std::string> out;
    for (auto id : stack) out.push_back(frames_.at(id).function);
    return out;
  }
  analysis::FrameTable frames_;
  const std::string python_ = "/usr/bin/python3.12";
  const std::string libc_ = "/lib/x86_64-linux-gnu/libc.so.6";
  const std::string perf_map_ = "[perf-7.map]";
};

TEST_F(PythonStackFolderTest, InterpreterFramesFoldIntoPythonFunctions) {
  std::vector<analysis::FrameId> stack = {
      frame("memcpy", libc_),                      // called by the interpreter: dropped
      frame("_PyEval_EvalFrameDefault", python_),  // dropped
      frame("inner", perf_map_),                   // kept
      frame("_PyEval_EvalFrameDefault", python_),  // dropped
      frame("ext_function", "/site/_ext.so"),      // a C extension: kept
      frame("_PyObject_Call", python_),            // interpreter module: dropped
      frame("outer", perf_map_),                   // the outermost Python function
      frame("_PyEval_EvalFrameDefault", python_),  // rootward of it: kept
      frame("main", python_),                      // kept
  };
  PythonStackFolder folder(frames_);
  folder.fold(stack);
  EXPECT_EQ(names(stack), (std::vector<std::string>{"inner", "ext_function", "outer",
                                                    "_PyEval_EvalFrameDefault", "main"}));
}

TEST_F(PythonStackFolderTest, CLibraryCalledByNativeCodeStays) {
  std::vector<analysis::FrameId> stack = {
      frame("memcpy", libc_),
      frame("ext_function", "/site/_ext.so"),
      frame("_PyEval_EvalFrameDefault", python_),
      frame("work", perf_map_),
  };
  PythonStackFolder folder(frames_);
  folder.fold(stack);
  EXPECT_EQ(names(stack), (std::vector<std::string>{"memcpy", "ext_function", "work"}));
}

TEST_F(PythonStackFolderTest, StacksWithoutPythonAreUnchanged) {
  std::vector<analysis::FrameId> stack = {
      frame("memcpy", libc_), frame("_PyEval_EvalFrameDefault", python_), frame("main", python_)};
  const auto before = stack;
  PythonStackFolder folder(frames_);
  folder.fold(stack);
  EXPECT_EQ(stack, before);
}

TEST_F(PythonStackFolderTest, InterpreterModulesAreLearnedAcrossStacks) {
  // The first stack names the interpreter's module; the second has no
  // _PyEval frame of its own but still loses its interpreter frames.
  PythonStackFolder folder(frames_);
  std::vector<analysis::FrameId> first = {frame("_PyEval_EvalFrameDefault", python_),
                                          frame("main", python_)};
  folder.fold(first);
  std::vector<analysis::FrameId> second = {
      frame("work", perf_map_), frame("_PyFunction_Vectorcall", python_), frame("run", perf_map_)};
  folder.fold(second);
  EXPECT_EQ(names(second), (std::vector<std::string>{"work", "run"}));
}

}  // namespace
}  // namespace strata::import
