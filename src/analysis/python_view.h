// The Python view of a sampled profile: what cProfile and py-spy show of a
// Python program. Traces keep every native frame (the interpreter's too);
// reports, the flame graphs and the exports make this view unless --native
// asks for the mixed stacks, as py-spy's --native does.
//
// Per sample, from the outermost Python function leafward:
// - frames rootward of the outermost Python function go (main, Py_BytesMain,
//   Py_RunMain, start_thread for threads): the profile is rooted at <module>;
// - the interpreter's frames go (the module holding _PyEval_EvalFrameDefault:
//   python3.x or libpython), and so do C-library frames it calls: that work
//   is the Python function's own time, as cProfile counts it;
// - a C function the interpreter calls that is a builtin or a method of a
//   builtin type (Frame::python_name, read from the PyMethodDef tables) stays, named as
//   cProfile names it ("{built-in method builtins.sorted}", no file: pstats'
//   '~'), and every native frame under it goes: its C callees are its own
//   time, until it calls back into Python (a key= function of sorted);
// - other native frames stay (C extension functions that are not builtins,
//   such as a type's tp_call).
// A sample without a Python frame keeps its native stack when no interpreter
// frame is on it (a native thread: OpenBLAS's, a CUDA driver thread); when
// the interpreter ran without Python code (start-up, shutdown; also a stack
// whose walk ended inside the interpreter's C code) its frames go and what
// they called stays (the loader loading an extension), under one root,
// "{interpreter: no Python frame}".
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>

#include "analysis/cpu_profile.h"

namespace strata::analysis {

// The module of Python frames read from a CPython 3.8-3.13 interpreter's
// memory at each sample (sampler/python_stack.h, merged into the native
// stack by import/cpu/python_frames.h), as "[perf-PID.map]" is the module of
// the frames a 3.12+ perf map names.
inline constexpr const char* kPythonMemoryModule = "[python]";

// A frame of a CPython perf map ("py::qualname:file" symbolized from
// /tmp/perf-PID.map) or one read from the interpreter's memory.
bool is_python_frame(const Frame& f);

// The C library and loader: their frames called by the interpreter are the
// interpreter's work (e.g. __tls_get_addr from a shared libpython).
bool is_system_library(const std::string& module);

// When the profile ran a CPython interpreter (frames of
// _PyEval_EvalFrameDefault) but holds no Python function (its frames could
// not be read from memory and it wrote no perf map): the interpreter's
// module path, for the note that says why the names are missing.
std::optional<std::string> interpreter_without_python_names(const Profile& profile);

// "3.11" from ".../libpython3.11.so.1.0" or "/usr/bin/python3.11"; "" when
// the path names no version.
std::string python_version_of(const std::string& module);

// The profile as cProfile would show it; nullopt when it has no Python frame
// (or is not sampled), so the caller keeps the profile it has.
std::optional<Profile> python_view(const Profile& native);

}  // namespace strata::analysis
