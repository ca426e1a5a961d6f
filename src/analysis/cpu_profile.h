// The CPU profile as the analyses see it: interned frames, sampled stacks
// (perf_event or the in-process fallback) or per-thread enter/exit events
// (-finstrument-functions). Filled by the store reader; everything here is
// plain data plus pure helpers shared by the analyses and the exports.
//
// Functions vs frames: a frame is one symbolized location (two addresses in
// one function are two frames); reports, flame graphs and exports aggregate
// by function, keyed like pstats by (function, file, line). Frame::line is
// therefore the line where the function is defined (DWARF DW_AT_decl_line,
// what pstats prints), not the line of the sampled instruction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace strata::analysis {

using FrameId = uint32_t;
// An id no frame has: where a remapping meets an id out of range (a damaged trace).
inline constexpr FrameId kInvalidFrame = ~FrameId{0};

struct Frame {
  std::string function;  // demangled; empty when the address could not be symbolized
  std::string file;      // source file; empty when unknown
  int line = 0;          // definition line; 0 when unknown
  std::string module;    // ELF path or "[perf-map]"
  uint64_t module_offset = 0;
  bool inlined = false;  // an inline frame synthesized from DWARF, not a real return address
  // cProfile's name for a C function that Python code calls, without its
  // braces ("built-in method builtins.sorted", "method 'join' of 'str'
  // objects"); "" for every other frame. See analysis/python_view.h.
  std::string python_name = {};
  // The line of the sampled instruction (or of the call, for a caller's
  // frame), from the line table; 0 when unknown (Python frames: perf maps
  // carry no lines). `--lines` and `--annotate` read it; the function
  // tables key on `line`, the definition.
  int sample_line = 0;

  friend bool operator==(const Frame&, const Frame&) = default;
};

// Equal frames share one id, so stacks are small vectors of ids and the
// analyses can index per-frame tables. Ids are dense, in insertion order.
class FrameTable {
 public:
  FrameId intern(const Frame& frame);
  const Frame& at(FrameId id) const { return frames_[id]; }
  size_t size() const { return frames_.size(); }
  const std::vector<Frame>& frames() const { return frames_; }

 private:
  using Key =
      std::tuple<std::string, std::string, int, std::string, uint64_t, bool, std::string, int>;
  std::vector<Frame> frames_;
  std::map<Key, FrameId> index_;
};

enum class ProfileMode { kPerfEvent, kInProcess, kInstrumented };

// "perf_event" | "in-process" | "instrumented": the names the trace stores and reports show.
std::string_view mode_name(ProfileMode mode);
inline bool is_sampled(ProfileMode mode) {
  return mode != ProfileMode::kInstrumented;
}

struct Sample {
  int32_t tid = 0;
  int32_t pid = 0;
  int64_t time_ns = 0;         // CLOCK_MONOTONIC
  int64_t weight_ns = 0;       // the cpu-clock period this sample stands for; 0 = use 1e9 / rate
  std::vector<FrameId> stack;  // leaf first
  bool cut = false;  // the unwind stopped at the stack copy's end: the root part is missing
};

enum class CallKind : uint8_t { kEnter, kExit };

struct CallEvent {
  int64_t time_ns = 0;
  FrameId frame = 0;
  CallKind kind = CallKind::kEnter;
};

// One thread's -finstrument-functions events in the order they happened.
// The tail may be unbalanced: a thread still running at exit or a crash
// leaves frames open (see balance_events).
struct ThreadCalls {
  int32_t tid = 0;
  int32_t pid = 0;
  std::vector<CallEvent> events;
};

struct ThreadInfo {
  int32_t tid = 0;
  int32_t pid = 0;
  std::string name;  // comm
};

struct ProcessInfo {
  int32_t pid = 0;
  std::string command;
};

struct Profile {
  ProfileMode mode = ProfileMode::kPerfEvent;
  double rate_hz = 0;  // requested sampling rate; 0 in instrumented mode
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;                   // user + sys of the target
  std::optional<int64_t> minor_faults;  // the target's page faults (ru_minflt); nullopt: unknown
  uint64_t lost_samples = 0;
  uint64_t throttles = 0;
  // Instrumented mode: the runtime's own cost per call, measured in the
  // target and already subtracted from the call events' times (0: none).
  double instrument_overhead_ns_per_call = 0;
  FrameTable frames;
  std::vector<Sample> samples;     // sampled modes
  std::vector<ThreadCalls> calls;  // instrumented mode
  std::vector<ThreadInfo> threads;
  std::vector<ProcessInfo> processes;
};

// The profile with each frame changed by `change(Frame&)` (a shorter name,
// another line): frames that become equal share one id, and the stacks and
// call events are renumbered. An id out of range (a damaged trace) stays
// out of range.
template <class Change>
Profile with_changed_frames(const Profile& profile, Change&& change) {
  Profile out = profile;
  FrameTable frames;
  std::vector<FrameId> remap(profile.frames.size());
  for (FrameId id = 0; id < profile.frames.size(); ++id) {
    Frame f = profile.frames.at(id);
    change(f);
    remap[id] = frames.intern(f);
  }
  auto new_id = [&](FrameId id) { return id < remap.size() ? remap[id] : kInvalidFrame; };
  for (Sample& s : out.samples) {
    for (FrameId& id : s.stack) id = new_id(id);
  }
  for (ThreadCalls& tc : out.calls) {
    for (CallEvent& e : tc.events) e.frame = new_id(e.frame);
  }
  out.frames = std::move(frames);
  return out;
}

// The weight of one sample in ns, falling back to the nominal period.
int64_t sample_weight_ns(const Profile& profile, const Sample& sample);

// A function as reports and exports show it (the aggregation key).
struct Function {
  std::string name;  // function, or "module+0xOFFSET" / "[unknown]" when unsymbolized
  std::string file;
  int line = 0;
  std::string module;  // basename; part of the key only when file is empty
  std::string label;   // pstats' "filename:lineno(function)"

  // The file pstats names it by: the source file, else the module.
  const std::string& file_or_module() const { return file.empty() ? module : file; }
};

// Frames mapped onto functions: of_frame[frame id] indexes functions.
// Functions are in first-seen frame order, so the mapping is deterministic.
struct FunctionIndex {
  std::vector<Function> functions;
  std::vector<uint32_t> of_frame;
};

FunctionIndex index_functions(const FrameTable& frames);

// pstats' func_std_string: "file:line(function)"; "{function}" when nothing
// about the source is known (pstats' form for built-ins); native code
// without line info shows its module as the file ("libc.so.6:0(memcpy)").
std::string pstats_label(std::string_view function, std::string_view file, int line,
                         std::string_view module);

// A thread's events made properly nested, which both the pstats analysis and
// the speedscope evented export need:
// - an exit that matches an open frame deeper than the top closes the frames
//   above it at the exit's time (a longjmp or exception skipped their exits);
// - an exit matching no open frame is dropped (tracing began inside it);
// - a timestamp earlier than its predecessor is raised to it;
// - frames still open at the end are closed at the last timestamp.
// Each repair is counted, never silent.
struct BalancedCalls {
  std::vector<CallEvent> events;
  uint64_t closed_at_end = 0;
  uint64_t closed_by_outer_exit = 0;
  uint64_t unmatched_exits = 0;
  uint64_t reordered_times = 0;
};

BalancedCalls balance_events(const std::vector<CallEvent>& events);

// True when `tids` is empty (all threads) or holds `tid`: the thread filter
// every analysis takes.
inline bool thread_wanted(const std::vector<int32_t>& tids, int32_t tid) {
  return tids.empty() || std::find(tids.begin(), tids.end(), tid) != tids.end();
}

// One call of a thread's balanced events, reported when it returns.
struct ReturnedCall {
  uint32_t function = 0;  // FunctionIndex::functions index
  bool has_caller = false;
  uint32_t caller = 0;  // the innermost open call's function, when has_caller
  int64_t duration_ns = 0;
  int64_t self_ns = 0;     // duration less the calls made from it
  bool primitive = false;  // cProfile's rule: the function was not already active
};

// Walks balanced events (balance_events) and hands each call to `visit`
// as it returns; frames outside `index` are skipped. The one walk that the
// pstats table and the callers/callees edges share.
template <class Visit>
void for_each_returned_call(const BalancedCalls& balanced, const FunctionIndex& index,
                            Visit&& visit) {
  struct Open {
    uint32_t function;
    int64_t enter_ns;
    int64_t child_ns;
  };
  std::vector<uint32_t> active(index.functions.size(), 0);
  std::vector<Open> stack;
  for (const CallEvent& e : balanced.events) {
    if (e.frame >= index.of_frame.size()) continue;
    const uint32_t f = index.of_frame[e.frame];
    if (e.kind == CallKind::kEnter) {
      stack.push_back({f, e.time_ns, 0});
      ++active[f];
      continue;
    }
    // Balanced events: this exit closes the top of the stack.
    const Open o = stack.back();
    stack.pop_back();
    ReturnedCall call;
    call.function = o.function;
    call.duration_ns = e.time_ns - o.enter_ns;
    call.self_ns = call.duration_ns - o.child_ns;
    call.primitive = --active[o.function] == 0;
    if (!stack.empty()) {
      stack.back().child_ns += call.duration_ns;
      call.has_caller = true;
      call.caller = stack.back().function;
    }
    visit(call);
  }
}

}  // namespace strata::analysis
