#include "analysis/python_view.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/cpu_pstats.h"

namespace strata::analysis {
namespace {

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

// Builds native profiles (leaf-first stacks of named frames) and reads the
// Python view's stacks back as names.
class PythonViewTest : public ::testing::Test {
 protected:
  FrameId frame(const std::string& function, const std::string& module,
                const std::string& python_name = "") {
    Frame f{function, "", 0, module, 0, false};
    f.python_name = python_name;
    return native_.frames.intern(f);
  }
  FrameId py(const std::string& function) { return frame(function, perf_map_); }
  FrameId interp(const std::string& function, const std::string& python_name = "") {
    return frame(function, python_, python_name);
  }
  void sample(std::vector<FrameId> stack, int32_t tid = 1) {
    Sample s;
    s.pid = 1;
    s.tid = tid;
    s.weight_ns = 1'000'000;
    s.stack = std::move(stack);
    native_.samples.push_back(std::move(s));
  }
  std::vector<std::vector<std::string>> view_stacks() {
    auto view = python_view(native_);
    EXPECT_TRUE(view.has_value());
    std::vector<std::vector<std::string>> out;
    if (!view) return out;
    for (const auto& s : view->samples) {
      std::vector<std::string> names;
      for (auto id : s.stack) names.push_back(view->frames.at(id).function);
      out.push_back(names);
    }
    return out;
  }
  using Names = std::vector<std::string>;

  Profile native_;
  const std::string python_ = "/usr/bin/python3.12";
  const std::string libc_ = "/lib/x86_64-linux-gnu/libc.so.6";
  const std::string perf_map_ = "[perf-7.map]";
};

TEST_F(PythonViewTest, RootedAtTheOutermostPythonFunctionWithoutTheInterpreter) {
  sample({
      frame("memcpy", libc_),                  // called by the interpreter: its work
      interp("_PyEval_EvalFrameDefault"),      //
      py("inner"),                             //
      interp("_PyEval_EvalFrameDefault"),      //
      frame("ext_function", "/site/_ext.so"),  // a C extension, no builtin: stays
      interp("_PyObject_Call"),                //
      py("<module>"),                          // the root of the view
      interp("_PyEval_EvalFrameDefault"),      // rootward: gone
      interp("Py_RunMain"),                    //
      frame("__libc_start_main", libc_),       //
  });
  EXPECT_EQ(view_stacks(), (std::vector<Names>{{"inner", "ext_function", "<module>"}}));
}

TEST_F(PythonViewTest, BuiltinsGetTheirOwnRowAndTheirCalleesTime) {
  sample({
      interp("list_sort_impl"),  // sorted's own work
      frame("memcpy", libc_),    // ... and the C library under it
      interp("builtin_sorted", "built-in method builtins.sorted"),
      interp("cfunction_vectorcall_FASTCALL_KEYWORDS"),
      interp("_PyEval_EvalFrameDefault"),
      py("work"),
      interp("_PyEval_EvalFrameDefault"),
      py("<module>"),
  });
  EXPECT_EQ(view_stacks(),
            (std::vector<Names>{{"built-in method builtins.sorted", "work", "<module>"}}));
}

TEST_F(PythonViewTest, ABuiltinCallingBackIntoPythonShowsTheCallback) {
  // sorted(xs, key=keyfn): the key function runs under sorted.
  sample({
      interp("_PyEval_EvalFrameDefault"),
      py("keyfn"),
      interp("_PyEval_EvalFrameDefault"),
      interp("list_sort_impl"),
      interp("builtin_sorted", "built-in method builtins.sorted"),
      interp("_PyEval_EvalFrameDefault"),
      py("<module>"),
  });
  EXPECT_EQ(view_stacks(),
            (std::vector<Names>{{"keyfn", "built-in method builtins.sorted", "<module>"}}));
}

TEST_F(PythonViewTest, ABuiltinsFunctionCalledByOtherCCodeIsNoRow) {
  // dict.get's C function called by an extension, not by the interpreter.
  sample({interp("dict_get", "method 'get' of 'dict' objects"),
          frame("ext_lookup", "/site/_ext.so"), interp("_PyEval_EvalFrameDefault"),
          py("<module>")});
  EXPECT_EQ(view_stacks(), (std::vector<Names>{{"ext_lookup", "<module>"}}));
}

TEST_F(PythonViewTest, OnlyCallDispatchersMakeBuiltinRows) {
  // type_new calls PyDict_New, whose name (through type.__prepare__'s
  // tail call) is a builtin's: it is the interpreter's work there.
  sample({interp("PyDict_New", "method '__prepare__' of 'type' objects"), interp("type_new"),
          interp("_PyEval_EvalFrameDefault"), py("<module>")});
  // An extension's function that is a builtin, called by the extension's
  // own code: its C name, not the builtin's.
  sample({frame("math_sqrt", "/lib/math.so", "built-in method math.sqrt"),
          frame("ext_helper", "/site/_ext.so"), interp("_PyEval_EvalFrameDefault"),
          py("<module>")});
  EXPECT_EQ(view_stacks(),
            (std::vector<Names>{{"<module>"}, {"math_sqrt", "ext_helper", "<module>"}}));
}

TEST_F(PythonViewTest, AnExtensionsOwnThreadKeepsItsStack) {
  // No Python frame and no interpreter entry point: waiting for the GIL in
  // a thread the extension started is the extension's stack.
  sample({interp("take_gil"), interp("PyGILState_Ensure"), frame("worker", "/site/_ext.so"),
          frame("start_thread", libc_)});
  sample({py("work"), interp("_PyEval_EvalFrameDefault")});
  EXPECT_EQ(
      view_stacks(),
      (std::vector<Names>{{"take_gil", "PyGILState_Ensure", "worker", "start_thread"}, {"work"}}));
}

TEST_F(PythonViewTest, ABuiltinShowsAsPstatsShowsIt) {
  sample({interp("unicode_join", "method 'join' of 'str' objects"),
          interp("_PyEval_EvalFrameDefault"), py("<module>")});
  auto view = python_view(native_);
  ASSERT_TRUE(view.has_value());
  auto index = index_functions(view->frames);
  ASSERT_EQ(view->samples.size(), 1u);
  const Function& leaf = index.functions[index.of_frame[view->samples[0].stack[0]]];
  EXPECT_EQ(leaf.label, "{method 'join' of 'str' objects}");
}

TEST_F(PythonViewTest, StacksWithoutPythonCode) {
  sample({py("work"), interp("_PyEval_EvalFrameDefault"), interp("main")});
  // Start-up: the interpreter's frames go, the loader's work stays.
  sample({frame("elf_machine_rela", "/lib64/ld-linux-x86-64.so.2"), interp("_imp_create_dynamic"),
          interp("Py_InitializeFromConfig"), interp("main")});
  sample({interp("_PyObject_IS_GC"), interp("Py_FinalizeEx"), interp("main")});
  // A native thread (OpenBLAS's): as it is.
  sample({frame("blas_thread_server", "/usr/lib/libopenblas.so.0"), frame("start_thread", libc_)},
         2);
  EXPECT_EQ(view_stacks(), (std::vector<Names>{
                               {"work"},
                               {"elf_machine_rela", "interpreter: no Python frame"},
                               {"interpreter: no Python frame"},
                               {"blas_thread_server", "start_thread"},
                           }));
}

TEST_F(PythonViewTest, AStackCutShortOfItsRootWithTheEvaluationLoopIsTheInterpreters) {
  // A deep import outgrows the copied stack: no entry point (main,
  // Py_BytesMain) is left, and no Python frame was read, but the evaluation
  // loop on it says the interpreter ran. Its frames go; the allocator it
  // called stays under the no-Python-frame root. (Seen with CPython 3.11:
  // interpreter frames in the Python view's file.)
  sample({frame("_int_malloc", libc_), interp("PyList_Append"), interp("marshal_loads"),
          interp("_PyEval_EvalFrameDefault"), interp("_PyEval_Vector"),
          interp("PyImport_ImportModuleLevelObject")});
  sample({py("work"), interp("_PyEval_EvalFrameDefault"), interp("main")});
  EXPECT_EQ(view_stacks(),
            (std::vector<Names>{{"_int_malloc", "interpreter: no Python frame"}, {"work"}}));
}

TEST_F(PythonViewTest, AStackThatEndsInsideTheInterpretersCodeIsTheInterpreters) {
  // CPython 3.11's start-up computing sys.path keeps 16 KiB path buffers on
  // the stack: the copied bytes end inside the interpreter's C code, with
  // neither an entry point nor the evaluation loop left. Its frames go (an
  // unsymbolized PLT stub among them: "libpython3.11.so.1.0+0xf8db0" was in
  // the Python view's file); the C library it called stays under the root.
  sample({frame("__memset_avx2", libc_), interp(""), interp("_Py_wrealpath"),
          interp("_PyPathConfig_ComputeSysPath0")});
  sample({interp("_Py_EncodeLocaleRaw"), interp("getpath_realpath")});
  sample({py("work"), interp("_PyEval_EvalFrameDefault"), interp("main")});
  EXPECT_EQ(view_stacks(), (std::vector<Names>{{"__memset_avx2", "interpreter: no Python frame"},
                                               {"interpreter: no Python frame"},
                                               {"work"}}));
}

TEST_F(PythonViewTest, TheInterpreterIsKnownFromAnyStack) {
  // This stack has no _PyEval frame of its own; another frame of the
  // profile names the interpreter's module.
  frame("_PyEval_EvalFrameDefault", python_);
  sample({py("work"), interp("_PyFunction_Vectorcall"), py("run")});
  EXPECT_EQ(view_stacks(), (std::vector<Names>{{"work", "run"}}));
}

TEST_F(PythonViewTest, DroppedFramesLeaveNoRows) {
  sample({interp("_PyEval_EvalFrameDefault"), py("work"), interp("main")});
  auto view = python_view(native_);
  ASSERT_TRUE(view.has_value());
  ASSERT_EQ(view->frames.size(), 1u);
  EXPECT_EQ(view->frames.at(0).function, "work");
}

TEST(PythonVersionOf, FromTheInterpretersFileName) {
  EXPECT_EQ(python_version_of("/usr/bin/python3.11"), "3.11");
  EXPECT_EQ(python_version_of("/opt/lib/libpython3.12.so.1.0"), "3.12");
  EXPECT_EQ(python_version_of("/usr/bin/python3.9"), "3.9");
  EXPECT_EQ(python_version_of("/usr/bin/python3"), "");
  EXPECT_EQ(python_version_of("/usr/lib/libfoo.so"), "");
}

TEST_F(PythonViewTest, AnInterpreterWithoutPythonFramesIsNamed) {
  sample({interp("_PyEval_EvalFrameDefault"), interp("main")});
  EXPECT_EQ(interpreter_without_python_names(native_), python_);
  sample({py("work"), interp("_PyEval_EvalFrameDefault")});
  EXPECT_EQ(interpreter_without_python_names(native_), std::nullopt);
}

TEST_F(PythonViewTest, NoPythonFrameNoView) {
  sample({frame("memcpy", libc_), frame("main", "/bin/app")});
  EXPECT_FALSE(python_view(native_).has_value());
}

TEST_F(PythonViewTest, ScalarsThreadsAndWeightsCarryOver) {
  native_.rate_hz = 4000;
  native_.wall_ns = 5;
  native_.threads.push_back({1, 1, "python3"});
  sample({py("work"), interp("_PyEval_EvalFrameDefault")});
  auto view = python_view(native_);
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->rate_hz, 4000);
  EXPECT_EQ(view->wall_ns, 5);
  ASSERT_EQ(view->threads.size(), 1u);
  EXPECT_EQ(view->threads[0].name, "python3");
  ASSERT_EQ(view->samples.size(), 1u);
  EXPECT_EQ(view->samples[0].weight_ns, 1'000'000);
}

}  // namespace
}  // namespace strata::analysis
