#include "cli/cpu_capture.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "symbolize/symbolizer.h"

namespace strata::cli {
namespace {

std::string hex_build_id(const sampler::Mapping& m) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < m.build_id_size && i < m.build_id.size(); ++i) {
    out += kDigits[m.build_id[i] >> 4];
    out += kDigits[m.build_id[i] & 15];
  }
  return out;
}

constexpr uint32_t kProtExec = 0x4;  // PROT_EXEC

// The address spaces of the sampled processes. A process forked by the
// target gets no MMAP records for what it inherited, so it starts from its
// parent's mappings (perf_event_open's inherit: Linux 6.x).
std::map<uint32_t, symbolize::AddressSpace> address_spaces(const sampler::RawProfile& raw) {
  std::map<uint32_t, uint32_t> parent;
  for (const auto& t : raw.tasks) {
    if (t.fork && t.pid != t.ppid) parent[t.pid] = t.ppid;
  }
  std::set<uint32_t> pids;
  for (const auto& s : raw.samples) pids.insert(s.pid);
  std::map<uint32_t, symbolize::AddressSpace> spaces;
  for (uint32_t pid : pids) {
    symbolize::AddressSpace space;
    space.pid = static_cast<int>(pid);
    std::vector<uint32_t> chain;  // pid, its parent, ... oldest last
    for (uint32_t p = pid; chain.size() < 64;) {
      chain.push_back(p);
      auto it = parent.find(p);
      if (it == parent.end()) break;
      p = it->second;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      auto maps = raw.mmaps.find(*it);
      if (maps == raw.mmaps.end()) continue;
      for (const auto& m : maps->second) {
        symbolize::Mapping out;
        out.start = m.addr;
        out.end = m.addr + m.len;
        out.pgoff = m.pgoff;
        out.path = m.filename;
        out.build_id = m.has_build_id ? hex_build_id(m) : "";
        out.executable = (m.prot & kProtExec) != 0 || m.prot == 0;
        space.mappings.push_back(std::move(out));
      }
    }
    spaces.emplace(pid, std::move(space));
  }
  return spaces;
}

bool is_python_frame(const analysis::Frame& f) {
  return f.module.rfind("[perf-", 0) == 0;
}

// CPython's perf maps carry no line numbers; cProfile shows the line of the
// `def`. This finds it in the source file: the first `def NAME` (or `async
// def`, `class`) for the last part of the qualified name. 0 when the file
// is not readable (<frozen ...>, <string>) or holds no such line.
class PythonSources {
 public:
  int def_line(const std::string& file, const std::string& qualname) {
    auto key = std::make_pair(file, qualname);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::string name = qualname.substr(qualname.rfind('.') + 1);
    int found = 0;
    std::ifstream in(file);
    std::string line;
    for (int number = 1; found == 0 && std::getline(in, line); ++number) {
      size_t i = line.find_first_not_of(" \t");
      if (i == std::string::npos) continue;
      std::string_view rest(line.c_str() + i);
      for (std::string_view keyword : {"def ", "async def ", "class "}) {
        if (rest.substr(0, keyword.size()) != keyword) continue;
        std::string_view after = rest.substr(keyword.size());
        size_t start = after.find_first_not_of(' ');
        if (start == std::string_view::npos) continue;
        after.remove_prefix(start);
        if (after.substr(0, name.size()) == name && after.size() > name.size() &&
            (after[name.size()] == '(' || after[name.size()] == ':' || after[name.size()] == ' ')) {
          found = number;
        }
      }
    }
    return cache_[key] = found;
  }

 private:
  std::map<std::pair<std::string, std::string>, int> cache_;
};

// The C library and loader: their frames called by the interpreter are the
// interpreter's work (e.g. __tls_get_addr from a shared libpython).
bool is_system_library(const std::string& module) {
  std::string base = module.substr(module.rfind('/') + 1);
  for (const char* prefix : {"libc.so", "libc-", "ld-linux", "libm.so", "libpthread"}) {
    if (base.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// A Python-level stack, as py-spy and cProfile show it: the interpreter's own
// frames (the module that holds _PyEval_EvalFrameDefault: python3.x or
// libpython) between and below Python functions are dropped, so a Python
// function's self time includes the interpreter work done for it. Native
// frames of other modules (C extensions, libc) stay, and so do the frames
// rootward of the outermost Python function (main, Py_RunMain).
class PythonStackFolder {
 public:
  explicit PythonStackFolder(const analysis::FrameTable& frames) : frames_(frames) {}

  void fold(std::vector<analysis::FrameId>& stack) {
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

 private:
  const analysis::FrameTable& frames_;
  std::set<std::string> interpreter_modules_;
};

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

BuiltProfile build_profile(const sampler::RawProfile& raw, const BuildOptions& options) {
  BuiltProfile built;
  analysis::Profile& profile = built.profile;
  profile.mode = analysis::ProfileMode::kPerfEvent;
  profile.rate_hz = raw.frequency_hz;
  profile.wall_ns = raw.end_ns - raw.start_ns;
  profile.cpu_ns = raw.user_ns + raw.sys_ns;
  profile.lost_samples = raw.counters.lost_samples;
  profile.throttles = raw.counters.throttle_events;

  auto spaces = address_spaces(raw);
  if (options.python_perf_maps) {
    for (auto& [pid, space] : spaces) {
      std::string path = options.perf_map_dir + "/perf-" + std::to_string(pid) + ".map";
      if (access(path.c_str(), R_OK) != 0) continue;
      auto map = symbolize::PerfMap::read_file(path);
      if (map.ok()) {
        space.perf_map = std::move(map).value();
        ++built.counters.python_maps_read;
      }
      unlink(path.c_str());
    }
  }

  // Pass 1: unwind every sample and symbolize each distinct (pid, pc).
  symbolize::Symbolizer symbolizer;
  using PcKey = std::tuple<uint32_t, uint64_t, bool>;  // pid, pc, is a return address
  std::map<PcKey, std::vector<symbolize::Frame>> symbols;
  std::vector<std::vector<uint64_t>> sample_pcs(raw.samples.size());
  for (size_t n = 0; n < raw.samples.size(); ++n) {
    const auto& s = raw.samples[n];
    auto space_it = spaces.find(s.pid);
    if (space_it == spaces.end()) continue;
    std::vector<uint64_t>& pcs = sample_pcs[n];
    if (raw.mode == sampler::StackMode::kDwarf && !raw.regs_of(s).empty()) {
      symbolize::UserRegs regs = symbolize::from_perf_regs(raw.regs_mask, raw.regs_of(s));
      symbolize::StackCopy stack{regs.sp(), raw.stack_of(s)};
      auto unwound = symbolizer.unwind(space_it->second, regs, stack, options.max_frames);
      pcs = std::move(unwound.pcs);
      if (unwound.stop == symbolize::UnwindStop::kStackTruncated ||
          unwound.stop == symbolize::UnwindStop::kMaxFrames) {
        ++built.counters.unwind_truncated;
      } else if (unwound.stop != symbolize::UnwindStop::kEnd) {
        ++built.counters.unwind_incomplete;
      }
    } else if (raw.mode == sampler::StackMode::kFramePointer) {
      auto chain = raw.callchain_of(s);
      pcs.assign(chain.begin(), chain.end());
    }
    if (pcs.empty()) pcs = {s.ip};
    for (size_t i = 0; i < pcs.size(); ++i) {
      PcKey key{s.pid, pcs[i], i > 0};
      if (!symbols.count(key)) {
        symbols.emplace(key, symbolizer.symbolize(space_it->second, pcs[i], i > 0));
      }
    }
  }

  // Pass 2: where DWARF gave a function no declaration (an address with a
  // symbol but outside every DWARF scope, e.g. some return addresses), take
  // the one another address of the same function had, so the function stays
  // one row instead of one per source file of its addresses.
  std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> declarations;
  for (const auto& [key, frames] : symbols) {
    for (const auto& f : frames) {
      if (f.has_symbol && f.decl_line > 0) {
        declarations.emplace(std::make_pair(f.module, f.function),
                             std::make_pair(f.decl_file, f.decl_line));
      }
    }
  }
  PythonSources python_sources;
  std::map<PcKey, std::vector<analysis::FrameId>> frame_ids;
  for (const auto& [key, frames] : symbols) {
    std::vector<analysis::FrameId> ids;
    for (const auto& f : frames) {
      analysis::Frame frame;
      frame.module = f.module;
      frame.inlined = f.inlined;
      if (!f.has_symbol) {
        frame.module_offset = f.module_offset;  // unsymbolized: one frame per address
      } else if (split_python_name(f.function, &frame.function, &frame.file)) {
        frame.line = python_sources.def_line(frame.file, frame.function);
      } else {
        frame.function = f.function;
        frame.file = f.decl_file;
        frame.line = f.decl_line;
        if (frame.line == 0) {
          auto d = declarations.find({f.module, f.function});
          if (d != declarations.end()) std::tie(frame.file, frame.line) = d->second;
        }
      }
      ids.push_back(profile.frames.intern(frame));
    }
    frame_ids.emplace(key, std::move(ids));
  }

  // Pass 3: the samples' stacks, leaf first.
  std::set<std::pair<int32_t, int32_t>> threads;
  PythonStackFolder python(profile.frames);
  for (size_t n = 0; n < raw.samples.size(); ++n) {
    const auto& s = raw.samples[n];
    if (sample_pcs[n].empty()) continue;  // a process without mappings
    analysis::Sample sample;
    sample.tid = static_cast<int32_t>(s.tid);
    sample.pid = static_cast<int32_t>(s.pid);
    sample.time_ns = static_cast<int64_t>(s.time);
    sample.weight_ns = static_cast<int64_t>(s.period);
    for (size_t i = 0; i < sample_pcs[n].size(); ++i) {
      const auto& ids = frame_ids.at({s.pid, sample_pcs[n][i], i > 0});
      sample.stack.insert(sample.stack.end(), ids.begin(), ids.end());
    }
    if (options.python_stacks) python.fold(sample.stack);
    threads.insert({sample.pid, sample.tid});
    profile.samples.push_back(std::move(sample));
  }

  // Thread names: the latest COMM of each thread (exec renames the main one).
  std::map<std::pair<int32_t, int32_t>, std::string> names;
  for (const auto& c : raw.comms) {
    names[{static_cast<int32_t>(c.pid), static_cast<int32_t>(c.tid)}] = c.name;
  }
  for (const auto& [pid, tid] : threads) {
    profile.threads.push_back({tid, pid, names[{pid, tid}]});
  }
  std::set<int32_t> pids;
  for (const auto& [pid, tid] : threads) pids.insert(pid);
  for (int32_t pid : pids) profile.processes.push_back({pid, names[{pid, pid}]});
  return built;
}

}  // namespace strata::cli
