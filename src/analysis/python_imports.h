// Where a Python program's import time goes, per imported module, as
// `python -X importtime` ranks it, from the samples of its Python view
// (analysis/python_view.h): no second run, and the same run the rest of the
// profile describes.
//
// A module being imported shows on a stack as its `<module>` frame (the file
// is the module's source) under importlib's `_find_and_load`. A sample's
// import chain is those frames from the root leafward: `import torch`
// running `import torch.nn` running `import torch.nn.modules.linear`. A
// module's cumulative time is the samples whose chain holds it; its self
// time those whose chain ends at it (its own body, and the extension
// modules it loads, which have no <module> frame). The main script's
// <module> is no import. A stack cut at the stack copy lacks the outer
// imports: such samples are counted apart.
//
// Module names come from the file path (`.../site-packages/torch/nn/
// __init__.py` is torch.nn; `<frozen zipimport>` is zipimport): the paths
// Python imports from, as far as a path tells.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"

namespace strata::analysis {

struct ImportRow {
  std::string module;  // dotted name
  std::string file;    // the <module> frame's file
  int depth = 0;       // 0: imported by the main script (or a thread's code)
  int64_t self_ns = 0;
  int64_t cumulative_ns = 0;
  uint64_t samples = 0;  // samples whose chain holds the module
};

struct ImportTable {
  int64_t import_ns = 0;  // samples under any import
  int64_t total_ns = 0;   // every sample
  // Samples whose stack was cut short (the stack copy, the frame limit):
  // their import chain lacks its outer part, so they are left out of the
  // rows (not guessed at).
  int64_t cut_ns = 0;
  uint64_t cut_samples = 0;
  // Depth first; siblings by cumulative time, largest first.
  std::vector<ImportRow> rows;
};

ImportTable python_imports(const Profile& view);

// Which part of a Python program's start-up a sample of its view is in: an
// import (importlib's _find_and_load, or a <module> below the main
// script's), the interpreter running without Python code (the view's
// "{interpreter: no Python frame}" root: its start-up and shutdown), or
// neither. diagnose reports these apart from the work (analysis/diagnosis.h).
enum class PythonStartup { kNone, kImport, kInterpreter };
PythonStartup python_startup_part(const Profile& view, const Sample& sample);

// The dotted module name a source path stands for.
std::string module_name_of(const std::string& file);

}  // namespace strata::analysis
