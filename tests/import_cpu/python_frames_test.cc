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
  EXPECT_EQ(sources.def_line(path_, "<module>"), 1) << "cProfile's line of a module";
  EXPECT_EQ(sources.def_line("<frozen runpy>", "<module>"), 1);
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

}  // namespace
}  // namespace strata::import

// py-spy --native's merge (issue 20 item 2): each group of Python frames
// goes right rootward of the eval frame that runs it.
namespace strata::import {
namespace {

TEST(MergePythonFrames, EachGroupFollowsItsEvalFrame) {
  // leaf C function, eval, C call dispatcher, eval, main
  const std::vector<analysis::FrameId> native = {1, 2, 3, 4, 5};
  const std::vector<bool> is_eval = {false, true, false, true, false};
  auto merged = merge_python_frames(native, is_eval, {{10}, {11, 12}}, false);
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(*merged, (std::vector<analysis::FrameId>{1, 2, 10, 3, 4, 11, 12, 5}));
}

TEST(MergePythonFrames, CountsThatDisagreeMergeNothing) {
  const std::vector<analysis::FrameId> native = {1, 2, 3};
  const std::vector<bool> is_eval = {false, true, false};
  EXPECT_FALSE(merge_python_frames(native, is_eval, {{10}, {11}}, false).has_value());
  EXPECT_FALSE(merge_python_frames(native, is_eval, {}, false).has_value());
  // Cut at its root, the native stack takes the groups it lacks at its end.
  auto cut = merge_python_frames(native, is_eval, {{10}, {11}}, true);
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(*cut, (std::vector<analysis::FrameId>{1, 2, 10, 3, 11}));
  // More eval frames than Python groups is a stale read even when cut.
  EXPECT_FALSE(merge_python_frames({2, 2}, {true, true}, {{10}}, true).has_value());
}

}  // namespace
}  // namespace strata::import
