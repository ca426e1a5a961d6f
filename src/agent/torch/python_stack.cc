#include "agent/torch/python_stack.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <unordered_map>

namespace strata::agent::torch {
namespace {

struct Python {
  void* (*this_thread_state)();
  int (*gil_check)();
  int (*ensure)();
  void (*release)(int);
  void* (*get_frame)();          // borrowed
  int (*line)(void*);
  void* (*code)(void*);          // new reference
  void* (*back)(void*);          // new reference
  void* (*getattr)(void*, const char*);
  const char* (*utf8)(void*);
  void (*decref)(void*);
};
Python py;
bool g_ready = false;

template <typename Fn>
bool resolve(Fn* fn, const char* name) {
  *fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
  return *fn != nullptr;
}

// "path(" and "): name" of a code object; filled once per code object.
struct CodeText {
  std::string file;
  std::string function;
};

std::string attr_text(void* object, const char* name) {
  void* value = py.getattr(object, name);
  if (value == nullptr) return "?";
  const char* text = py.utf8(value);
  std::string out = text != nullptr ? text : "?";
  py.decref(value);
  return out;
}

// Leaked on purpose: torch's threads may call in after thread_local
// destructors ran.
thread_local std::unordered_map<void*, CodeText>* t_codes = nullptr;

}  // namespace

bool python_stack_init() {
  g_ready = resolve(&py.this_thread_state, "PyGILState_GetThisThreadState") &&
            resolve(&py.gil_check, "PyGILState_Check") && resolve(&py.ensure, "PyGILState_Ensure") &&
            resolve(&py.release, "PyGILState_Release") && resolve(&py.get_frame, "PyEval_GetFrame") &&
            resolve(&py.line, "PyFrame_GetLineNumber") && resolve(&py.code, "PyFrame_GetCode") &&
            resolve(&py.back, "PyFrame_GetBack") && resolve(&py.getattr, "PyObject_GetAttrString") &&
            resolve(&py.utf8, "PyUnicode_AsUTF8") && resolve(&py.decref, "Py_DecRef");
  return g_ready;
}

bool python_stack(int frames, std::string* out) {
  out->clear();
  if (!g_ready || frames <= 0) return false;
  bool took = false;
  int gil = 0;
  if (!py.gil_check()) {
    if (py.this_thread_state() == nullptr) return false;  // a thread Python never ran on
    gil = py.ensure();
    took = true;
  }
  if (t_codes == nullptr) t_codes = new std::unordered_map<void*, CodeText>;
  void* frame = py.get_frame();
  bool owned = false;  // the first frame is borrowed, the ones from back() are not
  char line[24];
  for (int n = 0; frame != nullptr && n < frames; ++n) {
    void* code = py.code(frame);
    auto it = t_codes->find(code);
    if (it == t_codes->end()) {  // keep the reference: the pointer stays this code's
      it = t_codes->emplace(code, CodeText{attr_text(code, "co_filename"), attr_text(code, "co_name")}).first;
    } else {
      py.decref(code);
    }
    if (n > 0) out->push_back('\n');
    std::snprintf(line, sizeof line, "(%d): ", py.line(frame));
    out->append(it->second.file).append(line).append(it->second.function);
    void* back = py.back(frame);
    if (owned) py.decref(frame);
    frame = back;
    owned = true;
  }
  if (owned && frame != nullptr) py.decref(frame);
  if (took) py.release(gil);
  return !out->empty();
}

}  // namespace strata::agent::torch
