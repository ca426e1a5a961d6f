#include "analysis/python_view.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace strata::analysis {
namespace {

// The modules that hold the interpreter's evaluation loop.
std::set<std::string> interpreter_modules(const FrameTable& frames) {
  std::set<std::string> out;
  for (const Frame& f : frames.frames()) {
    if (f.function == "_PyEval_EvalFrameDefault") out.insert(f.module);
  }
  return out;
}

// The root of the samples that ran the interpreter but no Python code
// (start-up, imports before the perf map is on, shutdown): one row instead
// of the interpreter's internals.
constexpr const char* kNoPythonFrame = "interpreter: no Python frame";

// The interpreter's own entry points: a stack holding one is the
// interpreter's work even with no Python frame on it (a C extension's own
// thread holds none, even when it calls into the C API).
bool is_interpreter_entry(const Frame& f) {
  static const std::set<std::string> kEntries = {"Py_BytesMain",  "Py_RunMain",
                                                 "Py_Main",       "pymain_main",
                                                 "Py_FinalizeEx", "Py_InitializeFromConfig",
                                                 "thread_run",    "pythread_wrapper"};
  return kEntries.count(f.function) > 0;
}

// Whether a frame of the interpreter is one that calls a C function for
// Python code: the evaluation loop or a call dispatcher (vectorcall,
// cfunction_call, _PyObject_MakeTpCall, ...). Unsymbolized frames of a
// stripped interpreter count, as nothing tells them apart. Other C code
// calling a builtin's function (type_new calling PyDict_New, which
// type.__prepare__ also is) makes no builtin row.
bool dispatches_calls(const Frame& f, const std::set<std::string>& interpreter) {
  if (!interpreter.count(f.module)) return false;
  if (f.function.empty()) return true;
  std::string lower = f.function;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return f.function == "_PyEval_EvalFrameDefault" || lower.find("call") != std::string::npos;
}

enum class Kept : uint8_t { kDropped, kAsIs, kAsBuiltin };

// What the Python view does with each frame of `stack` (leaf first);
// `under_root` says the kept frames go under the kNoPythonFrame root.
std::vector<Kept> kept_frames(const FrameTable& frames, const std::vector<FrameId>& stack,
                              const std::set<std::string>& interpreter, bool* under_root) {
  std::vector<Kept> keep(stack.size(), Kept::kDropped);
  *under_root = false;
  size_t outermost = stack.size();
  size_t leafmost_interpreter = stack.size();
  bool interpreter_entry = false;
  for (size_t i = 0; i < stack.size(); ++i) {
    const Frame& f = frames.at(stack[i]);
    if (is_python_frame(f)) outermost = i;
    if (leafmost_interpreter == stack.size() && interpreter.count(f.module)) {
      leafmost_interpreter = i;
    }
    // The evaluation loop itself also says so: a stack cut short of its root
    // (deep imports outgrow the copied stack bytes) has no entry point left,
    // and a loop with no Python frame read is start-up's or the reader's miss.
    interpreter_entry = interpreter_entry || is_interpreter_entry(f) ||
                        f.function == "_PyEval_EvalFrameDefault";
  }
  if (outermost == stack.size()) {
    // No Python frame: the interpreter's own work keeps what it called (the
    // loader loading an extension); any other stack is kept as it is. A
    // stack whose outermost frame read is the interpreter's is its work too:
    // the walk ended inside its C code, with no entry point or evaluation
    // loop left (CPython 3.11's start-up keeps 16 KiB path buffers on the
    // stack, which outgrow the copied stack bytes); a thread an extension
    // started ends at its own root (start_thread), not in the interpreter.
    const bool rooted_in_interpreter =
        !stack.empty() && interpreter.count(frames.at(stack.back()).module) > 0;
    const bool collapse =
        (interpreter_entry || rooted_in_interpreter) && leafmost_interpreter < stack.size();
    for (size_t i = 0; i < stack.size(); ++i) {
      keep[i] = !collapse || i < leafmost_interpreter ? Kept::kAsIs : Kept::kDropped;
    }
    *under_root = collapse;
    return keep;
  }
  bool caller_is_interpreter = false;
  bool under_builtin = false;
  for (size_t i = outermost + 1; i-- > 0;) {
    const Frame& f = frames.at(stack[i]);
    if (is_python_frame(f)) {
      keep[i] = Kept::kAsIs;
      under_builtin = false;
      caller_is_interpreter = true;  // a trampoline: what it calls is the interpreter
      continue;
    }
    if (under_builtin) continue;  // the builtin's own work
    const bool called_for_python =
        i + 1 < stack.size() && dispatches_calls(frames.at(stack[i + 1]), interpreter);
    if (!f.python_name.empty() && called_for_python) {
      keep[i] = Kept::kAsBuiltin;
      under_builtin = true;
      continue;
    }
    bool interpreter_work =
        interpreter.count(f.module) > 0 || (caller_is_interpreter && is_system_library(f.module));
    keep[i] = interpreter_work ? Kept::kDropped : Kept::kAsIs;
    caller_is_interpreter = interpreter_work;
  }
  return keep;
}

// A builtin as pstats shows it: cProfile's name, no file or module
// (pstats_label prints "{name}").
Frame builtin_frame(const Frame& f) {
  Frame builtin;
  builtin.function = f.python_name;
  return builtin;
}

}  // namespace

bool is_python_frame(const Frame& f) {
  // "[perf-PID.map]": CPython >= 3.12's perf maps; "[python]": frames read
  // from the interpreter's memory (import/cpu/python_frames.h).
  return f.module.rfind("[perf-", 0) == 0 || f.module == kPythonMemoryModule;
}

bool is_system_library(const std::string& module) {
  std::string base = module.substr(module.rfind('/') + 1);
  for (const char* prefix : {"libc.so", "libc-", "ld-linux", "libm.so", "libpthread"}) {
    if (base.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::optional<std::string> interpreter_without_python_names(const Profile& profile) {
  const auto& all = profile.frames.frames();
  if (std::any_of(all.begin(), all.end(), is_python_frame)) return std::nullopt;
  for (const Frame& f : all) {
    if (f.function == "_PyEval_EvalFrameDefault") return f.module;
  }
  return std::nullopt;
}

std::string python_version_of(const std::string& module) {
  const std::string base = module.substr(module.rfind('/') + 1);
  size_t at = base.find("python3.");
  if (at == std::string::npos) return "";
  size_t end = at + 8;
  while (end < base.size() && base[end] >= '0' && base[end] <= '9') ++end;
  return end > at + 8 ? base.substr(at + 6, end - at - 6) : "";
}

std::optional<Profile> python_view(const Profile& native) {
  if (!is_sampled(native.mode)) return std::nullopt;
  const auto& all = native.frames.frames();
  if (std::none_of(all.begin(), all.end(), is_python_frame)) return std::nullopt;
  const auto interpreter = interpreter_modules(native.frames);

  Profile view;
  view.mode = native.mode;
  view.rate_hz = native.rate_hz;
  view.wall_ns = native.wall_ns;
  view.cpu_ns = native.cpu_ns;
  view.lost_samples = native.lost_samples;
  view.throttles = native.throttles;
  view.threads = native.threads;
  view.processes = native.processes;
  // Only the frames the view keeps enter its table, so nothing the view
  // dropped shows up as a zero row.
  std::vector<std::optional<FrameId>> as_is(native.frames.size());
  std::vector<std::optional<FrameId>> as_builtin(native.frames.size());
  view.samples.reserve(native.samples.size());
  for (const Sample& s : native.samples) {
    Sample out = s;
    out.stack.clear();
    bool under_root = false;
    auto keep = kept_frames(native.frames, s.stack, interpreter, &under_root);
    for (size_t i = 0; i < s.stack.size(); ++i) {
      if (keep[i] == Kept::kDropped) continue;
      const Frame& f = native.frames.at(s.stack[i]);
      const bool builtin = keep[i] == Kept::kAsBuiltin;
      auto& id = (builtin ? as_builtin : as_is)[s.stack[i]];
      if (!id) id = view.frames.intern(builtin ? builtin_frame(f) : f);
      out.stack.push_back(*id);
    }
    if (under_root) {
      Frame root;
      root.function = kNoPythonFrame;
      out.stack.push_back(view.frames.intern(root));
    }
    view.samples.push_back(std::move(out));
  }
  return view;
}

}  // namespace strata::analysis
