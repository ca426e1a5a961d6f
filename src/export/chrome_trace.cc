// chrome_trace (export/chrome_trace.h): tracks, lanes, events, flows.
//
// The document is written by hand, one event per line, with nlohmann::json
// only for strings and args: timestamps must be exact decimals of integer
// nanoseconds, which a double would not always print, and one line per
// event keeps big exports greppable and diffable.
#include "export/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <compare>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/global_id.h"
#include "export/slice_lanes.h"

namespace strata::exporter {
namespace {

using Json = nlohmann::ordered_json;  // args keep the order they are written in

using global_id::pid_of;
using global_id::tid_of;
constexpr auto global_pid_of = global_id::process_of;

// Tracks other than a thread's API calls get tids from here up: real tids
// fit in 24 bits (the GlobalId's tid field), so they never collide, and
// viewers that order threads by tid (Perfetto) put them after the threads.
constexpr int64_t kSyntheticTidBase = global_id::kFieldMask + 1;

// Perfetto reads "displayTimeUnit": "ns" as "ts is in ns", unlike Chrome,
// which only changes the ruler; so it is left out and ts is always in us.

std::string json_text(const Json& j) {
  // replace: invalid UTF-8 (names are whatever the program passed to CUDA
  // or NVTX) becomes U+FFFD instead of throwing.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string quoted(std::string_view s) {
  return json_text(Json(std::string(s)));
}

// ns as us with up to three decimals, exactly: 1234567 -> "1234.567".
void append_us(std::string& out, int64_t ns) {
  uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out += '-';
  fmt::format_to(std::back_inserter(out), "{}", magnitude / 1000);
  unsigned frac = static_cast<unsigned>(magnitude % 1000);
  if (frac == 0) return;
  std::string digits = fmt::format("{:03}", frac);
  while (digits.back() == '0') digits.pop_back();
  out += '.';
  out += digits;
}

std::string basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos || slash + 1 == path.size() ? path : path.substr(slash + 1);
}

std::string dim3(const std::array<int64_t, 3>& d) {
  return fmt::format("({}, {}, {})", d[0], d[1], d[2]);
}

// --- tracks ---------------------------------------------------------------

enum class TrackKind { kTorch, kNvtx, kApi, kNvtxStartEnd, kGpu };

// Order of tracks within a process: CPU threads by tid, each with its
// PyTorch ops above its NVTX track above its API track (as nsys draws them),
// then start/end ranges, then GPU streams by device and stream.
struct TrackKey {
  int64_t pid = 0;
  int group = 0;  // 0 thread, 1 start/end ranges, 2 GPU stream
  int64_t a = 0;  // tid or device
  int64_t b = 0;  // stream
  int kind = 0;   // within a thread: -1 PyTorch ops, 0 NVTX, 1 API
  auto operator<=>(const TrackKey&) const = default;
};

enum class Source { kApi, kNvtx, kGpu, kTorch };

struct Track {
  TrackKind kind = TrackKind::kApi;
  int64_t tid = 0;  // the thread of a thread's tracks
  int64_t device = 0;
  int64_t stream = 0;
  Source source = Source::kApi;
  std::vector<size_t> rows;       // indices into the timeline's vector of `source`
  SliceLanes lanes;               // per row
  std::vector<int64_t> lane_tid;  // per lane
};

// Heterogeneous lookup: find a std::string key by string_view without a copy.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Process {
  int64_t global_pid = 0;  // for PROCESSES' name
};

// One export: builds the tracks, then writes the document into out_. Used
// once, from one thread.
class Exporter {
 public:
  Exporter(const GpuTimeline& t, const ChromeTraceOptions& o) : t_(t), options_(o) {}

  ChromeTrace run() {
    build_tracks();
    // About 300 bytes per event: growing a string of hundreds of MB by
    // doubling would copy it several times.
    out_.reserve(300 * (t_.api_calls.size() + 2 * t_.gpu_ops.size() + t_.nvtx_ranges.size() +
                        2 * t_.torch_ops.size()));
    out_ += "{\"traceEvents\":[\n";
    write_metadata();
    write_slices();
    write_flows();
    out_ += "\n],\n\"otherData\":";
    out_ += json_text(other_data());
    out_ += "}\n";
    return {std::move(out_), stats_};
  }

 private:
  void add(const TrackKey& key, TrackKind kind, Source source, size_t row) {
    Track& track = tracks_[key];
    track.kind = kind;
    track.source = source;
    track.rows.push_back(row);
  }

  void build_tracks() {
    for (size_t i = 0; i < t_.api_calls.size(); ++i) {
      int64_t g = t_.api_calls[i].global_tid;
      note_process(g, global_pid_of(g));
      add({pid_of(g), 0, tid_of(g), 0, 1}, TrackKind::kApi, Source::kApi, i);
    }
    // NVTX ranges get tracks of their own rather than sharing the thread's
    // API track. NVTX and CUPTI timestamp their events independently (the
    // NVTX handler on its push/pop, CUPTI inside the driver around the
    // call), so a range and a call that the program nested can overlap
    // partially by a few ns, which Chrome and Perfetto cannot draw on one
    // track; and a range may legitimately end inside a call of another
    // thread. On its own track each kind nests by construction: push/pop
    // ranges form a stack per thread, and calls on a thread do not overlap.
    for (size_t i = 0; i < t_.nvtx_ranges.size(); ++i) {
      const auto& r = t_.nvtx_ranges[i];
      note_process(r.global_tid, global_pid_of(r.global_tid));
      if (r.push_pop) {
        add({pid_of(r.global_tid), 0, tid_of(r.global_tid), 0, 0}, TrackKind::kNvtx, Source::kNvtx,
            i);
      } else {
        // Start/end ranges may overlap one another in any way and cross
        // threads: one per-process track, spread over lanes as needed.
        add({pid_of(r.global_tid), 1, 0, 0, 0}, TrackKind::kNvtxStartEnd, Source::kNvtx, i);
      }
    }
    // PyTorch ops nest per thread as they ran (one RecordFunction stack per
    // thread); a track of their own for the reason NVTX has one.
    for (size_t i = 0; i < t_.torch_ops.size(); ++i) {
      int64_t g = t_.torch_ops[i].global_tid;
      note_process(g, global_pid_of(g));
      add({pid_of(g), 0, tid_of(g), 0, -1}, TrackKind::kTorch, Source::kTorch, i);
    }
    for (size_t i = 0; i < t_.gpu_ops.size(); ++i) {
      const auto& op = t_.gpu_ops[i];
      note_process(op.global_pid, op.global_pid);
      add({pid_of(op.global_pid), 2, op.device_id, op.stream_id, 0}, TrackKind::kGpu, Source::kGpu,
          i);
    }
    for (auto& [key, track] : tracks_) {
      track.tid = key.group == 0 ? key.a : 0;
      track.device = key.a;
      track.stream = key.b;
      std::vector<SliceSpan> spans;
      spans.reserve(track.rows.size());
      for (size_t row : track.rows) {
        auto [start, end] = times(track.source, row);
        spans.push_back({start, std::max(start, end)});
      }
      track.lanes = assign_slice_lanes(spans);
    }
    assign_tids();
  }

  void note_process(int64_t any_global_id, int64_t global_pid) {
    processes_.try_emplace(pid_of(any_global_id), Process{global_pid});
  }

  // A thread's API track keeps the thread's tid, so that the viewer names
  // it as the thread; every other lane gets a synthetic tid, in sort order.
  void assign_tids() {
    int64_t current_pid = -1;
    int64_t next_synthetic = 0;
    for (auto& [key, track] : tracks_) {
      if (key.pid != current_pid) {
        current_pid = key.pid;
        next_synthetic = kSyntheticTidBase;
      }
      for (uint32_t lane = 0; lane < track.lanes.lanes; ++lane) {
        bool real = track.kind == TrackKind::kApi && lane == 0;
        track.lane_tid.push_back(real ? track.tid : next_synthetic++);
      }
    }
  }

  std::pair<int64_t, int64_t> times(Source source, size_t row) const {
    switch (source) {
      case Source::kApi:
        return {t_.api_calls[row].start, t_.api_calls[row].end};
      case Source::kNvtx:
        return {t_.nvtx_ranges[row].start, t_.nvtx_ranges[row].end};
      case Source::kTorch:
        return {t_.torch_ops[row].start, t_.torch_ops[row].end};
      case Source::kGpu:
        break;
    }
    return {t_.gpu_ops[row].start, t_.gpu_ops[row].end};
  }

  std::string thread_name(int64_t pid, int64_t tid) const {
    // ThreadNames is keyed by globalTid; the high bits beyond the pid
    // (hardware and VM ids) come from the process's globalPid.
    auto p = processes_.find(pid);
    int64_t global_tid = (p == processes_.end() ? global_id::make_pid(pid) : p->second.global_pid) | tid;
    auto it = t_.thread_names.find(global_tid);
    if (it != t_.thread_names.end() && !it->second.empty()) return it->second;
    return fmt::format("thread {}", tid);
  }

  std::string track_name(int64_t pid, const Track& track, uint32_t lane) const {
    std::string name;
    switch (track.kind) {
      case TrackKind::kApi:
        name = thread_name(pid, track.tid);
        break;
      case TrackKind::kNvtx:
        name = fmt::format("NVTX ({} {})", thread_name(pid, track.tid), track.tid);
        break;
      case TrackKind::kTorch:
        name = fmt::format("PyTorch ops ({} {})", thread_name(pid, track.tid), track.tid);
        break;
      case TrackKind::kNvtxStartEnd:
        name = "NVTX start/end ranges";
        break;
      case TrackKind::kGpu:
        name = fmt::format("GPU {} stream {}", track.device, track.stream);
        break;
    }
    if (lane > 0) name += fmt::format(" (overlap {})", lane);
    return name;
  }

  // --- events -------------------------------------------------------------

  // Kernel and NVTX names repeat by the thousand and escaping dominates the
  // cost of writing them, so each distinct name is escaped once.
  const std::string& quoted_name(std::string_view name) {
    auto it = quoted_names_.find(name);
    if (it == quoted_names_.end())
      it = quoted_names_.emplace(std::string(name), quoted(name)).first;
    return it->second;
  }

  void begin_event() {
    if (!first_event_) out_ += ",\n";
    first_event_ = false;
  }

  void metadata(const char* name, int64_t pid, const int64_t* tid, const Json& args) {
    begin_event();
    fmt::format_to(std::back_inserter(out_), R"({{"name":"{}","ph":"M","pid":{})", name, pid);
    if (tid != nullptr) fmt::format_to(std::back_inserter(out_), R"(,"tid":{})", *tid);
    out_ += ",\"args\":";
    out_ += json_text(args);
    out_ += '}';
  }

  void write_metadata() {
    int64_t sort = 0;
    for (const auto& [pid, process] : processes_) {
      auto it = t_.process_names.find(process.global_pid);
      // PROCESSES.name is the executable's path; its file name fits a track header.
      std::string name = it != t_.process_names.end() && !it->second.empty()
                             ? basename(it->second)
                             : fmt::format("process {}", pid);
      metadata("process_name", pid, nullptr, Json{{"name", name}});
      metadata("process_sort_index", pid, nullptr, Json{{"sort_index", sort++}});
    }
    int64_t current_pid = -1;
    int64_t thread_sort = 0;
    for (const auto& [key, track] : tracks_) {
      if (key.pid != current_pid) {
        current_pid = key.pid;
        thread_sort = 0;
      }
      for (uint32_t lane = 0; lane < track.lanes.lanes; ++lane) {
        int64_t tid = track.lane_tid[lane];
        metadata("thread_name", key.pid, &tid, Json{{"name", track_name(key.pid, track, lane)}});
        metadata("thread_sort_index", key.pid, &tid, Json{{"sort_index", thread_sort++}});
      }
    }
  }

  void slice(std::string_view name, const char* cat, int64_t start, int64_t end, int64_t pid,
             int64_t tid, const Json& args) {
    begin_event();
    if (end < start) {
      ++stats_.negative_durations;
      end = start;
    }
    ++stats_.slices;
    out_ += "{\"name\":";
    out_ += quoted_name(name);
    fmt::format_to(std::back_inserter(out_), R"(,"cat":"{}","ph":"X","ts":)", cat);
    append_us(out_, start);
    out_ += ",\"dur\":";
    append_us(out_, end - start);
    fmt::format_to(std::back_inserter(out_), R"(,"pid":{},"tid":{},"args":)", pid, tid);
    out_ += json_text(args);
    out_ += '}';
  }

  void write_slices() {
    api_tid_.assign(t_.api_calls.size(), 0);
    gpu_tid_.assign(t_.gpu_ops.size(), 0);
    torch_tid_.assign(t_.torch_ops.size(), 0);
    for (const auto& [key, track] : tracks_) {
      for (size_t k : track.lanes.order) {
        size_t row = track.rows[k];
        uint32_t lane = track.lanes.lane[k];
        if (lane > 0) ++stats_.overlap_slices;
        int64_t tid = track.lane_tid[lane];
        switch (track.source) {
          case Source::kApi:
            api_tid_[row] = tid;
            api_slice(t_.api_calls[row], key.pid, tid);
            break;
          case Source::kNvtx:
            nvtx_slice(t_.nvtx_ranges[row], key.pid, tid);
            break;
          case Source::kTorch:
            torch_tid_[row] = tid;
            torch_slice(t_.torch_ops[row], key.pid, tid);
            break;
          case Source::kGpu:
            gpu_tid_[row] = tid;
            gpu_slice(t_.gpu_ops[row], key.pid, tid);
            break;
        }
      }
    }
  }

  void api_slice(const TimelineApiCall& c, int64_t pid, int64_t tid) {
    Json args = {{"api", c.driver ? "driver" : "runtime"}};
    if (c.correlation_id != 0) args["correlation_id"] = c.correlation_id;
    slice(c.name, c.driver ? "cuda_driver" : "cuda_runtime", c.start, c.end, pid, tid, args);
  }

  void nvtx_slice(const TimelineNvtxRange& r, int64_t pid, int64_t tid) {
    Json args = {{"style", r.push_pop ? "PushPop" : "StartEnd"}};
    if (!r.domain.empty()) args["domain"] = r.domain;
    if (!r.push_pop) args["thread"] = tid_of(r.global_tid);
    if (r.unterminated) args["unterminated"] = true;
    slice(r.name, "nvtx", r.start, r.end, pid, tid, args);
  }

  void torch_slice(const TimelineTorchOp& op, int64_t pid, int64_t tid) {
    Json args = {{"scope", op.scope}};
    if (op.seq >= 0) args["sequence_number"] = op.seq;
    if (op.external_id != 0) args["external_id"] = op.external_id;
    if (!op.shapes.empty()) args["input_shapes"] = op.shapes;
    if (op.unfinished) args["unfinished"] = true;
    slice(op.name, "torch_op", op.start, op.end, pid, tid, args);
  }

  void gpu_slice(const TimelineGpuOp& op, int64_t pid, int64_t tid) {
    Json args = {{"device", op.device_id}, {"stream", op.stream_id}};
    if (op.correlation_id != 0) args["correlation_id"] = op.correlation_id;
    const char* cat = "cuda_kernel";
    if (op.kind == GpuOpKind::kKernel) {
      args["grid"] = dim3(op.grid);
      args["block"] = dim3(op.block);
      args["registers_per_thread"] = op.registers_per_thread;
      args["static_shared_memory_bytes"] = op.static_shared_memory;
      args["dynamic_shared_memory_bytes"] = op.dynamic_shared_memory;
    } else {
      cat = op.kind == GpuOpKind::kMemcpy ? "cuda_memcpy" : "cuda_memset";
      if (!op.copy_kind.empty()) args["copy_kind"] = op.copy_kind;
      args["bytes"] = op.bytes;
      // bytes per ns is GB/s (10^9 bytes); left out where the duration is 0.
      if (op.end > op.start) {
        double gbps = static_cast<double>(op.bytes) / static_cast<double>(op.end - op.start);
        args["bandwidth_GBps"] = std::round(gbps * 1000.0) / 1000.0;
      }
    }
    slice(op.name, cat, op.start, op.end, pid, tid, args);
  }

  // One arrow per GPU op from the API call of the same correlation id in the
  // same process (a graph launch has many). Flow v1 events: "s" inside the
  // call and "f" with "bp":"e" inside the op, both at the slice's midpoint,
  // so that Chrome and Perfetto bind each to its enclosing slice; at the
  // slice's start they might bind to its parent, or to the previous slice
  // where starts and ends tie.
  void write_flows() {
    std::map<std::pair<int64_t, int64_t>, size_t> launches;  // (globalPid, correlation) -> call
    for (size_t i = 0; i < t_.api_calls.size(); ++i) {
      const auto& c = t_.api_calls[i];
      if (c.correlation_id == 0) continue;
      auto [it, added] = launches.try_emplace({global_pid_of(c.global_tid), c.correlation_id}, i);
      if (!added && c.start < t_.api_calls[it->second].start) it->second = i;
    }
    int64_t id = 0;
    for (const auto& [key, track] : tracks_) {
      if (track.source != Source::kGpu) continue;
      for (size_t k : track.lanes.order) {
        size_t row = track.rows[k];
        const auto& op = t_.gpu_ops[row];
        auto it = op.correlation_id == 0
                      ? launches.end()
                      : launches.find({global_pid_of(op.global_pid), op.correlation_id});
        if (it == launches.end()) {
          ++stats_.unmatched_gpu_ops;
          continue;
        }
        const auto& call = t_.api_calls[it->second];
        ++id;
        flow('s', id, midpoint(call.start, call.end), pid_of(call.global_tid),
             api_tid_[it->second]);
        flow('f', id, midpoint(op.start, op.end), key.pid, gpu_tid_[row]);
        ++stats_.flows;
      }
    }
    write_op_flows(id, launches);
  }

  // One arrow per GPU op from the PyTorch op that launched it: the launch's
  // correlation id -> the external id the op pushed -> the op (same process).
  // The arrow leaves the op's track at the launch call's midpoint, where the
  // op is the innermost open op (it pushed the id, and ops nested in it that
  // had ended pushed their own), so the viewer binds it to that op and not to
  // a child that happens to span the op's midpoint.
  void write_op_flows(int64_t id,
                      const std::map<std::pair<int64_t, int64_t>, size_t>& launches) {
    if (t_.torch_ops.empty()) return;
    std::map<std::pair<int64_t, int64_t>, size_t> ops;  // (globalPid, external id) -> op
    for (size_t i = 0; i < t_.torch_ops.size(); ++i) {
      const auto& op = t_.torch_ops[i];
      if (op.external_id != 0) ops.try_emplace({global_pid_of(op.global_tid), op.external_id}, i);
    }
    std::map<std::pair<int64_t, int64_t>, size_t> op_of_launch;  // (globalPid, correlation) -> op
    for (const auto& link : t_.external_links) {
      auto it = ops.find({global_pid_of(link.global_pid), link.external_id});
      if (it != ops.end()) op_of_launch.try_emplace({global_pid_of(link.global_pid), link.correlation_id}, it->second);
    }
    for (const auto& [key, track] : tracks_) {
      if (track.source != Source::kGpu) continue;
      for (size_t k : track.lanes.order) {
        size_t row = track.rows[k];
        const auto& gpu = t_.gpu_ops[row];
        if (gpu.correlation_id == 0) continue;
        auto it = op_of_launch.find({global_pid_of(gpu.global_pid), gpu.correlation_id});
        if (it == op_of_launch.end()) continue;
        const auto& op = t_.torch_ops[it->second];
        auto call = launches.find({global_pid_of(gpu.global_pid), gpu.correlation_id});
        int64_t from = call == launches.end()
                           ? midpoint(op.start, op.end)
                           : midpoint(t_.api_calls[call->second].start, t_.api_calls[call->second].end);
        ++id;
        flow('s', id, from, pid_of(op.global_tid), torch_tid_[it->second], "op", "torch_op_launch");
        flow('f', id, midpoint(gpu.start, gpu.end), key.pid, gpu_tid_[row], "op",
             "torch_op_launch");
        ++stats_.op_flows;
      }
    }
  }

  static int64_t midpoint(int64_t start, int64_t end) {
    return end <= start ? start : start + (end - start) / 2;
  }

  void flow(char phase, int64_t id, int64_t ts, int64_t pid, int64_t tid,
            const char* name = "launch", const char* cat = "cuda_launch") {
    begin_event();
    // Perfetto pairs v1 flow events by (id, cat, name): both ends share them.
    fmt::format_to(std::back_inserter(out_), R"({{"name":"{}","cat":"{}","ph":"{}",)", name, cat,
                   phase);
    if (phase == 'f') out_ += R"("bp":"e",)";
    fmt::format_to(std::back_inserter(out_), R"("id":{},"ts":)", id);
    append_us(out_, ts);
    fmt::format_to(std::back_inserter(out_), R"(,"pid":{},"tid":{}}})", pid, tid);
  }

  Json other_data() const {
    Json j = Json::object();
    if (!options_.source.empty()) j["source"] = options_.source;
    if (!options_.exporter.empty()) j["exporter"] = options_.exporter;
    j["slices"] = stats_.slices;
    j["flows"] = stats_.flows;
    if (!t_.torch_ops.empty()) j["op_flows"] = stats_.op_flows;
    j["unmatched_gpu_ops"] = stats_.unmatched_gpu_ops;
    j["overlap_slices"] = stats_.overlap_slices;
    j["negative_durations"] = stats_.negative_durations;
    return j;
  }

  const GpuTimeline& t_;
  const ChromeTraceOptions& options_;
  std::map<int64_t, Process> processes_;  // by pid
  std::map<TrackKey, Track> tracks_;
  std::vector<int64_t> api_tid_;  // per API call: the tid of its lane
  std::vector<int64_t> gpu_tid_;  // per GPU op
  std::vector<int64_t> torch_tid_;  // per PyTorch op
  ChromeTraceStats stats_;
  std::string out_;
  bool first_event_ = true;
  std::unordered_map<std::string, std::string, NameHash, std::equal_to<>> quoted_names_;
};

}  // namespace

ChromeTrace chrome_trace(const GpuTimeline& timeline, const ChromeTraceOptions& options) {
  return Exporter(timeline, options).run();
}

}  // namespace strata::exporter
