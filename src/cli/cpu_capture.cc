#include "cli/cpu_capture.h"

#include <unistd.h>

#include <map>
#include <set>

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

bool is_python_frame(const analysis::Frame& f) { return f.module.rfind("[perf-", 0) == 0; }

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
    std::vector<analysis::FrameId> folded;
    folded.reserve(stack.size());
    for (size_t i = 0; i < stack.size(); ++i) {
      const auto& f = frames_.at(stack[i]);
      if (i < outermost && !is_python_frame(f) && interpreter_modules_.count(f.module)) continue;
      folded.push_back(stack[i]);
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

  symbolize::Symbolizer symbolizer;
  // Symbolized stacks repeat: cache frame ids per (pid, pc, is-return-address).
  std::map<std::tuple<uint32_t, uint64_t, bool>, std::vector<analysis::FrameId>> frame_cache;
  auto frames_of = [&](const symbolize::AddressSpace& space, uint32_t pid, uint64_t pc,
                       bool return_address) -> const std::vector<analysis::FrameId>& {
    auto key = std::make_tuple(pid, pc, return_address);
    auto it = frame_cache.find(key);
    if (it != frame_cache.end()) return it->second;
    std::vector<analysis::FrameId> ids;
    for (const auto& f : symbolizer.symbolize(space, pc, return_address)) {
      analysis::Frame frame;
      frame.module = f.module;
      frame.inlined = f.inlined;
      if (f.has_symbol) {
        if (!split_python_name(f.function, &frame.function, &frame.file)) {
          frame.function = f.function;
          frame.file = f.decl_file.empty() ? f.file : f.decl_file;
          frame.line = f.decl_line;
        }
      } else {
        frame.module_offset = f.module_offset;  // unsymbolized: one frame per address
      }
      ids.push_back(profile.frames.intern(frame));
    }
    return frame_cache.emplace(key, std::move(ids)).first->second;
  };

  std::set<std::pair<int32_t, int32_t>> threads;
  PythonStackFolder python(profile.frames);
  for (const auto& s : raw.samples) {
    auto space_it = spaces.find(s.pid);
    if (space_it == spaces.end()) continue;
    const auto& space = space_it->second;
    std::vector<uint64_t> pcs;
    if (raw.mode == sampler::StackMode::kDwarf) {
      auto values = raw.regs_of(s);
      if (values.empty()) {
        pcs = {s.ip};
      } else {
        symbolize::UserRegs regs = symbolize::from_perf_regs(raw.regs_mask, values);
        symbolize::StackCopy stack{regs.sp(), raw.stack_of(s)};
        auto unwound = symbolizer.unwind(space, regs, stack, options.max_frames);
        pcs = std::move(unwound.pcs);
        if (pcs.empty()) pcs = {s.ip};
        if (unwound.stop == symbolize::UnwindStop::kStackTruncated ||
            unwound.stop == symbolize::UnwindStop::kMaxFrames) {
          ++built.counters.unwind_truncated;
        } else if (unwound.stop != symbolize::UnwindStop::kEnd) {
          ++built.counters.unwind_incomplete;
        }
      }
    } else {
      auto chain = raw.callchain_of(s);
      pcs.assign(chain.begin(), chain.end());
      if (pcs.empty()) pcs = {s.ip};
    }
    analysis::Sample sample;
    sample.tid = static_cast<int32_t>(s.tid);
    sample.pid = static_cast<int32_t>(s.pid);
    sample.time_ns = static_cast<int64_t>(s.time);
    sample.weight_ns = static_cast<int64_t>(s.period);
    for (size_t i = 0; i < pcs.size(); ++i) {
      const auto& ids = frames_of(space, s.pid, pcs[i], i > 0);
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
