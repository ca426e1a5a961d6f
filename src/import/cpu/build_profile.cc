#include "import/cpu/build_profile.h"

#include <unistd.h>

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/python_view.h"
#include "import/cpu/address_spaces.h"
#include "import/cpu/python_frames.h"
#include "symbolize/perf_map.h"
#include "symbolize/symbolizer.h"

namespace strata::import {
namespace {

using AddressSpaces = std::map<uint32_t, symbolize::AddressSpace>;
using PcKey = std::tuple<uint32_t, uint64_t, bool>;  // pid, pc, is a return address

// Every sample's pcs (leaf first; empty for a process without mappings) and
// the symbolizer's frames of each distinct (pid, pc).
struct UnwoundSamples {
  std::vector<std::vector<uint64_t>> pcs;  // parallel to RawProfile::samples
  std::vector<bool> cut;                   // the stack copy or the frame limit ended the unwind
  std::map<PcKey, std::vector<symbolize::Frame>> symbols;
};

// Reads and removes the perf maps the sampled processes wrote, and only
// those: /tmp is everyone's, and as root strata would otherwise read and
// delete a file another user planted under a sampled pid. A map is the
// process's own when it did not exist before the run, is a regular file
// (no symlink followed) and is owned by the uid the process ran as (recorded
// by the sampler while it lived; strata's own for a process it never saw
// alive, as strata's children run as strata unless they exec a set-uid
// program). The sampler notes the maps it refused.
void read_python_perf_maps(const sampler::RawProfile& raw, AddressSpaces& spaces,
                           const BuildOptions& options, CaptureCounters& counters) {
  for (auto& [pid, space] : spaces) {
    if (raw.perf_maps_before.count(pid)) continue;
    std::string path = options.perf_map_dir + "/perf-" + std::to_string(pid) + ".map";
    auto uid = raw.uids.find(pid);
    const uint32_t owner = uid != raw.uids.end() ? uid->second : geteuid();
    symbolize::FileIdentity identity;
    auto map = symbolize::PerfMap::read_owned_file(path, owner, &identity);
    if (!map.ok()) continue;
    space.perf_map = std::move(map).value();
    ++counters.python_maps_read;
    symbolize::remove_if_same(path, identity);
  }
}

// The pcs of one sample: unwound from its stack copy (dwarf), the kernel's
// callchain (fp), or at least its ip.
std::vector<uint64_t> sample_pcs(const sampler::RawProfile& raw, const sampler::Sample& s,
                                 const symbolize::AddressSpace& space, size_t max_frames,
                                 symbolize::Symbolizer& symbolizer, CaptureCounters& counters,
                                 bool* cut) {
  std::vector<uint64_t> pcs;
  *cut = false;
  if (raw.mode == sampler::StackMode::kDwarf && !raw.regs_of(s).empty()) {
    symbolize::UserRegs regs = symbolize::from_perf_regs(raw.regs_mask, raw.regs_of(s));
    symbolize::StackCopy stack{regs.sp(), raw.stack_of(s)};
    auto unwound = symbolizer.unwind(space, regs, stack, max_frames);
    pcs = std::move(unwound.pcs);
    if (unwound.stop == symbolize::UnwindStop::kStackTruncated) {
      ++counters.unwind_truncated;
      *cut = true;
    } else if (unwound.stop == symbolize::UnwindStop::kMaxFrames) {
      ++counters.unwind_max_frames;
      *cut = true;
    } else if (unwound.stop != symbolize::UnwindStop::kEnd) {
      ++counters.unwind_incomplete;
    }
  } else if (raw.mode == sampler::StackMode::kFramePointer) {
    auto chain = raw.callchain_of(s);
    pcs.assign(chain.begin(), chain.end());
  }
  if (pcs.empty()) pcs = {s.ip};
  return pcs;
}

// Pass 1: unwind every sample and symbolize each distinct (pid, pc).
UnwoundSamples unwind_and_symbolize(const sampler::RawProfile& raw, const AddressSpaces& spaces,
                                    const BuildOptions& options, CaptureCounters& counters) {
  symbolize::Symbolizer symbolizer;
  UnwoundSamples out;
  out.pcs.resize(raw.samples.size());
  out.cut.resize(raw.samples.size());
  for (size_t n = 0; n < raw.samples.size(); ++n) {
    const auto& s = raw.samples[n];
    auto space_it = spaces.find(s.pid);
    if (space_it == spaces.end()) continue;
    std::vector<uint64_t>& pcs = out.pcs[n];
    bool cut = false;
    pcs = sample_pcs(raw, s, space_it->second, options.max_frames, symbolizer, counters, &cut);
    out.cut[n] = cut;
    for (size_t i = 0; i < pcs.size(); ++i) {
      PcKey key{s.pid, pcs[i], i > 0};
      if (!out.symbols.count(key)) {
        out.symbols.emplace(key, symbolizer.symbolize(space_it->second, pcs[i], i > 0));
      }
    }
  }
  return out;
}

// Where DWARF gave a function no declaration (an address with a symbol but
// outside every DWARF scope, e.g. some return addresses), the one another
// address of the same function had, so the function stays one row instead
// of one per source file of its addresses. Keyed by (module, function).
std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> declarations(
    const std::map<PcKey, std::vector<symbolize::Frame>>& symbols) {
  std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> out;
  for (const auto& [key, frames] : symbols) {
    for (const auto& f : frames) {
      if (f.has_symbol && f.decl_line > 0) {
        out.emplace(std::make_pair(f.module, f.function), std::make_pair(f.decl_file, f.decl_line));
      }
    }
  }
  return out;
}

// Whether any frame is a Python function (a perf-map entry "py::...").
bool has_python_frames(const std::map<PcKey, std::vector<symbolize::Frame>>& symbols) {
  std::string function;
  std::string file;
  for (const auto& [key, frames] : symbols) {
    for (const auto& f : frames) {
      if (f.has_symbol && split_python_name(f.function, &function, &file)) return true;
    }
  }
  return false;
}

// Pass 2: the profile's frames of each distinct (pid, pc), innermost first.
// `python_read`: Python stacks were read from memory.
std::map<PcKey, std::vector<analysis::FrameId>> intern_frames(
    const std::map<PcKey, std::vector<symbolize::Frame>>& symbols, bool python_read,
    analysis::FrameTable& table) {
  auto declared = declarations(symbols);
  PythonSources python_sources;
  // Only a Python program's C functions can be builtins; other profiles
  // skip reading their modules' tables.
  std::optional<PythonBuiltinNames> builtins;
  if (python_read || has_python_frames(symbols)) builtins.emplace();
  std::map<PcKey, std::vector<analysis::FrameId>> frame_ids;
  for (const auto& [key, frames] : symbols) {
    std::vector<analysis::FrameId> ids;
    // A return address can be one past its function's end (a call that
    // does not return); the call itself is one byte before.
    const uint64_t back = std::get<2>(key) ? 1 : 0;
    for (const auto& f : frames) {
      analysis::Frame frame;
      frame.module = f.module;
      frame.inlined = f.inlined;
      if (!f.has_symbol) {
        frame.module_offset = f.module_offset;  // unsymbolized: one frame per address
        if (builtins) frame.python_name = builtins->name_at(f.module, f.module_offset - back);
      } else if (split_python_name(f.function, &frame.function, &frame.file)) {
        frame.line = python_sources.def_line(frame.file, frame.function);
      } else {
        frame.function = f.function;
        frame.file = f.decl_file;
        frame.line = f.decl_line;
        // The sampled line is in the location's file; a line of another
        // file (code #included into the function, as CPython's
        // generated_cases.c.h is) would pair a line with the wrong source.
        if (f.file == f.decl_file) frame.sample_line = f.line;
        if (builtins && !f.inlined) {
          frame.python_name = builtins->name(f.module, f.raw_function);
          // Symbols from a debug file the tables do not hold (a stripped
          // interpreter with its -dbgsym installed): by address.
          if (frame.python_name.empty()) {
            frame.python_name = builtins->name_at(f.module, f.module_offset - back);
          }
        }
        if (frame.line == 0) {
          auto d = declared.find({f.module, f.function});
          if (d != declared.end()) std::tie(frame.file, frame.line) = d->second;
        }
      }
      ids.push_back(table.intern(frame));
    }
    frame_ids.emplace(key, std::move(ids));
  }
  return frame_ids;
}

// Interns the Python frames read from memory: one frame per (code object,
// line), named like a perf-map frame (qualname, file, the code's first
// line) with the sampled line.
class PythonMemoryFrames {
 public:
  PythonMemoryFrames(const sampler::RawProfile& raw, analysis::FrameTable& table)
      : raw_(raw), table_(table) {}

  // The groups merge_python_frames takes: split after each entry frame.
  std::vector<std::vector<analysis::FrameId>> groups(const sampler::Sample& s) {
    std::vector<std::vector<analysis::FrameId>> out;
    std::vector<analysis::FrameId> current;
    for (const sampler::PythonFrameRead& f : raw_.python_stack_of(s)) {
      current.push_back(intern(f));
      if (f.entry) out.push_back(std::move(current)), current.clear();
    }
    if (!current.empty()) out.push_back(std::move(current));
    return out;
  }

 private:
  analysis::FrameId intern(const sampler::PythonFrameRead& f) {
    auto key = std::make_pair(f.code, f.line);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
    analysis::Frame frame;
    if (f.code < raw_.python_codes.size()) {
      const sampler::PythonCode& code = raw_.python_codes[f.code];
      frame.function = code.name;
      frame.file = code.file;
      frame.line = code.first_line;
    }
    frame.module = analysis::kPythonMemoryModule;
    frame.sample_line = f.line;
    return ids_[key] = table_.intern(frame);
  }

  const sampler::RawProfile& raw_;
  analysis::FrameTable& table_;
  std::map<std::pair<uint32_t, int32_t>, analysis::FrameId> ids_;
};

// Pass 3: the samples' stacks, leaf first, with the Python stacks read from
// memory merged in.
void add_samples(const sampler::RawProfile& raw, const UnwoundSamples& unwound,
                 const std::map<PcKey, std::vector<analysis::FrameId>>& frame_ids,
                 analysis::Profile& profile, CaptureCounters& counters) {
  PythonMemoryFrames python(raw, profile.frames);
  // By FrameId, filled as the table grows: the eval loop's frames, and the
  // Python frames a 3.12+ perf map names (which the frames read from memory
  // replace: they say the same, with lines).
  std::vector<bool> eval_frame;
  std::vector<bool> perf_map_frame;
  auto classify_up_to = [&](analysis::FrameId id) {
    while (eval_frame.size() <= id) {
      const analysis::Frame& f =
          profile.frames.at(static_cast<analysis::FrameId>(eval_frame.size()));
      eval_frame.push_back(!f.inlined && f.function == "_PyEval_EvalFrameDefault");
      perf_map_frame.push_back(analysis::is_python_frame(f) &&
                               f.module != analysis::kPythonMemoryModule);
    }
  };
  for (size_t n = 0; n < raw.samples.size(); ++n) {
    const auto& s = raw.samples[n];
    const auto& pcs = unwound.pcs[n];
    if (pcs.empty()) continue;  // a process without mappings
    analysis::Sample sample;
    sample.tid = static_cast<int32_t>(s.tid);
    sample.pid = static_cast<int32_t>(s.pid);
    sample.time_ns = static_cast<int64_t>(s.time);
    sample.weight_ns = static_cast<int64_t>(s.period);
    sample.cut = unwound.cut[n];
    for (size_t i = 0; i < pcs.size(); ++i) {
      const auto& ids = frame_ids.at({s.pid, pcs[i], i > 0});
      sample.stack.insert(sample.stack.end(), ids.begin(), ids.end());
    }
    if (s.python_read && s.python_size > 0) {
      auto groups = python.groups(s);
      std::vector<analysis::FrameId> native;
      std::vector<bool> evals;
      for (analysis::FrameId id : sample.stack) {
        classify_up_to(id);
        if (perf_map_frame[id]) continue;
        native.push_back(id);
        evals.push_back(eval_frame[id]);
      }
      if (auto merged = merge_python_frames(native, evals, groups, sample.cut)) {
        sample.stack = std::move(*merged);
        ++counters.python_stacks_merged;
        if (sample.cut) {
          sample.cut = false;  // the root part, in Python frames, is there
          ++counters.python_whole_of_truncated;
        }
      } else {
        ++counters.python_stacks_mismatched;
      }
    }
    profile.samples.push_back(std::move(sample));
  }
}

// The sampled threads and processes, in (pid, tid) order, named by the
// latest COMM of each thread (exec renames the main one).
void add_threads_and_processes(const sampler::RawProfile& raw, analysis::Profile& profile) {
  std::set<std::pair<int32_t, int32_t>> threads;
  for (const auto& s : profile.samples) threads.insert({s.pid, s.tid});
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
}

}  // namespace

BuiltProfile build_profile(const sampler::RawProfile& raw, const BuildOptions& options) {
  BuiltProfile built;
  analysis::Profile& profile = built.profile;
  profile.mode = options.mode;
  profile.rate_hz = raw.frequency_hz;
  profile.wall_ns = raw.end_ns - raw.start_ns;
  profile.cpu_ns = raw.user_ns + raw.sys_ns;
  profile.minor_faults = raw.minor_faults;
  profile.lost_samples = raw.counters.lost_samples;
  profile.throttles = raw.counters.throttle_events;
  built.counters.python_read_failures = raw.counters.python_read_failures;
  built.counters.python_read_ns = raw.counters.python_read_ns;
  built.counters.python_read_delay_ns = raw.counters.python_read_delay_ns;

  AddressSpaces spaces = address_spaces(raw);
  if (options.python_perf_maps) read_python_perf_maps(raw, spaces, options, built.counters);
  UnwoundSamples unwound = unwind_and_symbolize(raw, spaces, options, built.counters);
  auto frame_ids = intern_frames(unwound.symbols, !raw.python_frames.empty(), profile.frames);
  add_samples(raw, unwound, frame_ids, profile, built.counters);
  add_threads_and_processes(raw, profile);
  return built;
}

}  // namespace strata::import
