#include "analysis/python_imports.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::analysis {
namespace {

TEST(ModuleNameOf, FromThePathsPythonImportsFrom) {
  EXPECT_EQ(module_name_of("/usr/lib/python3.12/json/__init__.py"), "json");
  EXPECT_EQ(module_name_of("/usr/lib/python3.12/json/decoder.py"), "json.decoder");
  EXPECT_EQ(module_name_of("/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/events.py"),
            "asyncio.events");
  EXPECT_EQ(module_name_of("/opt/venv/lib/python3.12/site-packages/torch/nn/__init__.py"),
            "torch.nn");
  EXPECT_EQ(module_name_of("/usr/lib/python3/dist-packages/numpy/core/numeric.py"),
            "numpy.core.numeric");
  EXPECT_EQ(module_name_of("<frozen zipimport>"), "zipimport");
  EXPECT_EQ(module_name_of("/home/me/project/helpers.py"), "helpers");
  EXPECT_EQ(module_name_of("helpers.py"), "helpers");
  EXPECT_EQ(module_name_of(""), "");
}

// Stacks of a program whose main script imports a, which imports b.
class PythonImportsTest : public ::testing::Test {
 protected:
  FrameId py(const std::string& function, const std::string& file) {
    return profile_.frames.intern({function, file, 1, "[perf-1.map]", 0, false});
  }
  void sample(std::vector<FrameId> leaf_first, bool cut = false) {
    Sample s;
    s.pid = s.tid = 1;
    s.weight_ns = 1'000'000;
    s.stack = std::move(leaf_first);
    s.cut = cut;
    profile_.samples.push_back(std::move(s));
  }
  Profile profile_;
  FrameId main_ = py("<module>", "/app/main.py");
  FrameId load_ = py("_find_and_load", "<frozen importlib._bootstrap>");
  FrameId exec_ = py("_call_with_frames_removed", "<frozen importlib._bootstrap>");
  FrameId a_ = py("<module>", "/usr/lib/python3.12/a.py");
  FrameId b_ = py("<module>", "/usr/lib/python3.12/b/__init__.py");
  FrameId work_ = py("work", "/app/main.py");
};

TEST_F(PythonImportsTest, SelfAndCumulativePerModuleAsATree) {
  sample({a_, exec_, load_, main_});                    // in a's body: 1 ms
  sample({b_, exec_, load_, a_, exec_, load_, main_});  // b, imported by a: 2 ms
  sample({b_, exec_, load_, a_, exec_, load_, main_});
  sample({work_, main_});                    // no import
  sample({b_, exec_, load_}, /*cut=*/true);  // the copy cut it: a's part is missing
  ImportTable t = python_imports(profile_);
  EXPECT_EQ(t.total_ns, 5'000'000);
  EXPECT_EQ(t.import_ns, 3'000'000);
  EXPECT_EQ(t.cut_samples, 1u);
  EXPECT_EQ(t.cut_ns, 1'000'000);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].module, "a");
  EXPECT_EQ(t.rows[0].depth, 0);
  EXPECT_EQ(t.rows[0].self_ns, 1'000'000);
  EXPECT_EQ(t.rows[0].cumulative_ns, 3'000'000);
  EXPECT_EQ(t.rows[1].module, "b");
  EXPECT_EQ(t.rows[1].depth, 1);
  EXPECT_EQ(t.rows[1].self_ns, 2'000'000);
  EXPECT_EQ(t.rows[1].cumulative_ns, 2'000'000);
}

TEST_F(PythonImportsTest, SiblingsByCumulativeTimeLargestFirst) {
  FrameId c = py("<module>", "/usr/lib/python3.12/c.py");
  sample({a_, exec_, load_, main_});
  sample({c, exec_, load_, main_});
  sample({c, exec_, load_, main_});
  ImportTable t = python_imports(profile_);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].module, "c");
  EXPECT_EQ(t.rows[1].module, "a");
}

// What diagnose leaves out of the work: imports (under _find_and_load, or a
// <module> below the main script's) and the interpreter's own samples.
TEST_F(PythonImportsTest, StartupPartsOfASample) {
  const FrameId no_python = profile_.frames.intern({"interpreter: no Python frame", "", 0, "", 0});
  sample({a_, exec_, load_, main_});
  sample({a_, main_});  // a <module> below the main script's, its loader frames elided
  sample({no_python});
  sample({work_, main_});
  ASSERT_EQ(profile_.samples.size(), 4u);
  EXPECT_EQ(python_startup_part(profile_, profile_.samples[0]), PythonStartup::kImport);
  EXPECT_EQ(python_startup_part(profile_, profile_.samples[1]), PythonStartup::kImport);
  EXPECT_EQ(python_startup_part(profile_, profile_.samples[2]), PythonStartup::kInterpreter);
  EXPECT_EQ(python_startup_part(profile_, profile_.samples[3]), PythonStartup::kNone);
}

TEST_F(PythonImportsTest, TheMainScriptIsNoImport) {
  sample({work_, main_});
  ImportTable t = python_imports(profile_);
  EXPECT_TRUE(t.rows.empty());
  EXPECT_EQ(t.import_ns, 0);
}

}  // namespace
}  // namespace strata::analysis
