// How Python functions enter a native profile: CPython's perf maps name
// them "py::qualname:filename"; this names their frames, finds the line of
// their `def` (perf maps carry no lines), and names the builtins they call
// as cProfile does. The view that hides the interpreter's frames is made at
// report time (analysis/python_view.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/cpu_profile.h"
#include "symbolize/python_methods.h"

namespace strata::import {

// Splits a CPython perf-map name "py::qualname:filename" into its parts;
// returns false for other names.
bool split_python_name(const std::string& name, std::string* function, std::string* file);

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

// cProfile's names of the C functions Python calls, from the PyMethodDef
// tables of the module that holds each (symbolize/python_methods.h). Each
// module is read once, on the first frame that asks.
// Threading: one thread.
class PythonBuiltinNames {
 public:
  // The name for the function whose linkage name is `symbol` in `module`;
  // "" when it is no builtin (or the module cannot be read).
  std::string name(const std::string& module, const std::string& symbol);
  // The same for an address of a module without symbols (its CFI tells
  // where functions start).
  std::string name_at(const std::string& module, uint64_t address);

 private:
  const symbolize::PythonMethods& methods(const std::string& module);
  std::map<std::string, symbolize::PythonMethods> modules_;
};

// py-spy --native's merge of a Python stack read from memory into the native
// stack of the same sample. `native` is leaf first and `is_eval[i]` marks
// the frames of the evaluation loop (_PyEval_EvalFrameDefault); `groups`,
// leaf first, holds for each C-level call of the loop the Python frames it
// runs, leaf first (one per call before 3.11; 3.11 runs Python-to-Python
// calls inside one). Each group goes right rootward of its eval frame, as a
// 3.12 perf-map trampoline sits, so the Python view treats both alike.
// nullopt when the counts disagree (the Python stack changed between the
// sample and the read), except that a native stack cut short at its root
// (`native_cut`) takes the groups it lacks at its root end.
std::optional<std::vector<analysis::FrameId>> merge_python_frames(
    const std::vector<analysis::FrameId>& native, const std::vector<bool>& is_eval,
    const std::vector<std::vector<analysis::FrameId>>& groups, bool native_cut);

}  // namespace strata::import
