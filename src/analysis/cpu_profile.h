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

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace strata::analysis {

using FrameId = uint32_t;

struct Frame {
  std::string function;  // demangled; empty when the address could not be symbolized
  std::string file;      // source file; empty when unknown
  int line = 0;          // definition line; 0 when unknown
  std::string module;    // ELF path or "[perf-map]"
  uint64_t module_offset = 0;
  bool inlined = false;  // an inline frame synthesized from DWARF, not a real return address

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
  using Key = std::tuple<std::string, std::string, int, std::string, uint64_t, bool>;
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
  int64_t cpu_ns = 0;  // user + sys of the target
  uint64_t lost_samples = 0;
  uint64_t throttles = 0;
  FrameTable frames;
  std::vector<Sample> samples;     // sampled modes
  std::vector<ThreadCalls> calls;  // instrumented mode
  std::vector<ThreadInfo> threads;
  std::vector<ProcessInfo> processes;
};

// The weight of one sample in ns, falling back to the nominal period.
int64_t sample_weight_ns(const Profile& profile, const Sample& sample);

// A function as reports and exports show it (the aggregation key).
struct Function {
  std::string name;  // function, or "module+0xOFFSET" / "[unknown]" when unsymbolized
  std::string file;
  int line = 0;
  std::string module;  // basename; part of the key only when file is empty
  std::string label;   // pstats' "filename:lineno(function)"
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

}  // namespace strata::analysis
