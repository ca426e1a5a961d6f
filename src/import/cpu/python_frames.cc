#include "import/cpu/python_frames.h"

#include <fstream>
#include <string_view>

namespace strata::import {
namespace {

// Whether `line` declares `name` with def, async def or class.
bool declares(const std::string& line, const std::string& name) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  std::string_view rest(line.c_str() + i);
  bool found = false;
  for (std::string_view keyword : {"def ", "async def ", "class "}) {
    if (rest.substr(0, keyword.size()) != keyword) continue;
    std::string_view after = rest.substr(keyword.size());
    size_t start = after.find_first_not_of(' ');
    if (start == std::string_view::npos) continue;
    after.remove_prefix(start);
    if (after.substr(0, name.size()) == name && after.size() > name.size() &&
        (after[name.size()] == '(' || after[name.size()] == ':' || after[name.size()] == ' ')) {
      found = true;
    }
  }
  return found;
}

}  // namespace

bool split_python_name(const std::string& name, std::string* function, std::string* file) {
  if (name.rfind("py::", 0) != 0) return false;
  size_t colon = name.find(':', 4);
  if (colon == std::string::npos) {
    *function = name.substr(4);
    file->clear();
  } else {
    *function = name.substr(4, colon - 4);
    *file = name.substr(colon + 1);
  }
  return true;
}

bool is_python_frame(const analysis::Frame& f) {
  return f.module.rfind("[perf-", 0) == 0;
}

bool is_system_library(const std::string& module) {
  std::string base = module.substr(module.rfind('/') + 1);
  for (const char* prefix : {"libc.so", "libc-", "ld-linux", "libm.so", "libpthread"}) {
    if (base.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

int PythonSources::def_line(const std::string& file, const std::string& qualname) {
  auto key = std::make_pair(file, qualname);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::string name = qualname.substr(qualname.rfind('.') + 1);
  int found = 0;
  std::ifstream in(file);
  std::string line;
  for (int number = 1; found == 0 && std::getline(in, line); ++number) {
    if (declares(line, name)) found = number;
  }
  return cache_[key] = found;
}

void PythonStackFolder::fold(std::vector<analysis::FrameId>& stack) {
  size_t outermost = stack.size();
  for (size_t i = 0; i < stack.size(); ++i) {
    const auto& f = frames_.at(stack[i]);
    if (is_python_frame(f)) {
      outermost = i;
    } else if (f.function == "_PyEval_EvalFrameDefault") {
      interpreter_modules_.insert(f.module);
    }
  }
  if (outermost == stack.size()) return;  // no Python frame
  // From the outermost Python frame leafward: a frame is the interpreter's
  // when it is in the interpreter's module, or in the C library and called
  // by the interpreter.
  std::vector<bool> drop(stack.size(), false);
  bool caller_is_interpreter = false;
  for (size_t i = outermost; i-- > 0;) {
    const auto& f = frames_.at(stack[i]);
    if (is_python_frame(f)) {
      caller_is_interpreter = true;  // a trampoline: what it calls is the interpreter
      continue;
    }
    bool interpreter = interpreter_modules_.count(f.module) > 0;
    drop[i] = interpreter || (caller_is_interpreter && is_system_library(f.module));
    caller_is_interpreter = drop[i];
  }
  std::vector<analysis::FrameId> folded;
  folded.reserve(stack.size());
  for (size_t i = 0; i < stack.size(); ++i) {
    if (!drop[i]) folded.push_back(stack[i]);
  }
  stack = std::move(folded);
}

}  // namespace strata::import
