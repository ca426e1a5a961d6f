// How Python functions enter a native profile: CPython's perf maps name
// them "py::qualname:filename"; this names their frames, finds the line of
// their `def` (perf maps carry no lines), and folds the interpreter's own
// frames into them so that a profile reads as cProfile's and py-spy's do.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/cpu_profile.h"

namespace strata::import {

// Splits a CPython perf-map name "py::qualname:filename" into its parts;
// returns false for other names.
bool split_python_name(const std::string& name, std::string* function, std::string* file);

// A frame symbolized from a perf map (module "[perf-PID.map]").
bool is_python_frame(const analysis::Frame& f);

// The C library and loader: their frames called by the interpreter are the
// interpreter's work (e.g. __tls_get_addr from a shared libpython).
bool is_system_library(const std::string& module);

// CPython's perf maps carry no line numbers; cProfile shows the line of the
// `def`. This finds it in the source file: the first `def NAME` (or `async
// def`, `class`) for the last part of the qualified name. 0 when the file
// is not readable (<frozen ...>, <string>) or holds no such line.
// Threading: one thread; it caches every answer (files are read once per name).
class PythonSources {
 public:
  int def_line(const std::string& file, const std::string& qualname);

 private:
  std::map<std::pair<std::string, std::string>, int> cache_;
};

// A Python-level stack, as py-spy and cProfile show it: the interpreter's own
// frames (the module that holds _PyEval_EvalFrameDefault: python3.x or
// libpython) between and below Python functions are dropped, so a Python
// function's self time includes the interpreter work done for it. Native
// frames of other modules (C extensions, libc) stay, and so do the frames
// rootward of the outermost Python function (main, Py_RunMain).
// It learns the interpreter's modules from the stacks it folds, so fold every
// stack of a profile with one folder. Threading: one thread; it keeps a
// reference to the frame table, which must outlive it.
class PythonStackFolder {
 public:
  explicit PythonStackFolder(const analysis::FrameTable& frames) : frames_(frames) {}

  // stack: leaf first.
  void fold(std::vector<analysis::FrameId>& stack);

 private:
  const analysis::FrameTable& frames_;
  std::set<std::string> interpreter_modules_;
};

}  // namespace strata::import
