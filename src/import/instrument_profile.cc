#include "import/instrument_profile.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <system_error>
#include <utility>

#include "format/byte_order.h"
#include "format/instrument_payloads.h"
#include "format/payloads.h"
#include "format/spool_format.h"
#include "format/spool_reader.h"
#include "import/chunk_visitor.h"
#include "symbolize/proc_maps.h"
#include "symbolize/symbolizer.h"

namespace strata::import {
namespace {

struct RawEvent {
  uint64_t stamp;  // on the thread's clock, absolute
  uint64_t address;
  bool exit;
};

// One thread's events as the spool holds them, in file order (which is the
// thread's own order: only the thread itself, or the exit handler after it
// stopped, writes its chunks).
struct RawThread {
  int32_t pid = 0;
  int32_t tid = 0;
  format::InstrumentClock clock = format::InstrumentClock::kMonotonic;
  std::vector<RawEvent> events;
};

// The TSC-to-ns line of one spool: the reference pair and the chunk pair
// farthest from it, which gives the rate with the least relative error.
struct Calibration {
  int64_t ref_ns = 0;
  uint64_t ref_ticks = 0;
  int64_t now_ns = 0;
  uint64_t now_ticks = 0;
  bool valid = false;

  int64_t to_ns(uint64_t ticks) const {
    if (!valid || now_ticks <= ref_ticks) return ref_ns;
    double rate = static_cast<double>(now_ns - ref_ns) / static_cast<double>(now_ticks - ref_ticks);
    double delta = ticks >= ref_ticks ? static_cast<double>(ticks - ref_ticks)
                                      : -static_cast<double>(ref_ticks - ticks);
    return ref_ns + static_cast<int64_t>(delta * rate);
  }
};

// What one spool contributes to the profile.
struct SpoolData {
  int32_t pid = 0;
  std::map<int32_t, RawThread> threads;  // by tid
  std::map<int32_t, std::string> thread_names;
  std::optional<std::string> command;
  std::string maps;  // every memory-map chunk, in order
  Calibration calibration;
};

void add_events(const format::InstrumentEvents& chunk, SpoolData& spool,
                InstrumentCounters& counters) {
  if (chunk.clock == format::InstrumentClock::kTsc) {
    Calibration c;
    c.ref_ns = chunk.ref_ns;
    c.ref_ticks = chunk.ref_ticks;
    c.now_ns = chunk.now_ns;
    c.now_ticks = chunk.now_ticks;
    c.valid = c.now_ticks > c.ref_ticks && c.now_ns >= c.ref_ns;
    Calibration& best = spool.calibration;
    if (c.valid && (!best.valid || c.now_ticks - c.ref_ticks > best.now_ticks - best.ref_ticks)) {
      best = c;
    } else if (!best.valid) {
      best.ref_ns = c.ref_ns;
      best.ref_ticks = c.ref_ticks;
    }
  }
  auto tid = static_cast<int32_t>(chunk.tid);
  RawThread& thread = spool.threads[tid];
  thread.pid = spool.pid;
  thread.tid = tid;
  thread.clock = chunk.clock;
  const size_t count = chunk.word_count();
  const std::byte* words = chunk.words.data();
  thread.events.reserve(thread.events.size() + count);
  // Deltas count from the chunk's own clock records: a chunk decodes alone.
  std::optional<uint64_t> previous;
  for (size_t i = 0; i < count; ++i) {
    uint64_t word = format::load_le64(words + i * format::kInstrumentWordSize);
    uint64_t address = word & format::kInstrumentAddressMask;
    if (address == 0) {
      if (i + 1 < count) {
        previous = format::load_le64(words + ++i * format::kInstrumentWordSize);
      } else {
        ++counters.torn_events;  // a clock record cut off by the exit snapshot
      }
      continue;
    }
    if (!previous) {
      ++counters.torn_events;
      continue;
    }
    *previous += word >> format::kInstrumentDeltaShift;
    thread.events.push_back(RawEvent{*previous, address, (word & format::kInstrumentExitBit) != 0});
  }
}

std::string join_args(const std::vector<std::string_view>& args) {
  std::string out;
  for (auto a : args) {
    if (!out.empty()) out.push_back(' ');
    out.append(a);
  }
  return out;
}

// What an instrument spool holds, gathered from the one chunk loop.
class SpoolVisitor final : public ChunkVisitor {
 public:
  SpoolVisitor(SpoolData& spool, InstrumentCounters& counters)
      : spool_(spool), counters_(counters) {}

  bool wants(format::ChunkKind kind) const override {
    using format::ChunkKind;
    return kind == ChunkKind::kThreadName || kind == ChunkKind::kProcessInfo ||
           kind == ChunkKind::kDropCounters || kind == ChunkKind::kInstrumentEvents ||
           kind == ChunkKind::kMemoryMap;
  }
  Status on_thread_name(const format::ThreadName& name) override {
    spool_.thread_names[static_cast<int32_t>(name.tid)] = std::string(name.name);
    return Ok{};
  }
  Status on_process_info(const format::ProcessInfo& info) override {
    spool_.command = join_args(info.args);
    return Ok{};
  }
  Status on_drop_counters(const std::vector<format::DropCounter>& drops) override {
    // Totals are cumulative: the spool's last value is its total.
    for (const auto& d : drops) {
      if (d.kind == static_cast<uint32_t>(format::DropCounterKind::kInstrumentEvents)) {
        counters_.dropped_events += d.total;
      }
    }
    return Ok{};
  }
  Status on_instrument_events(const format::InstrumentEvents& events) override {
    add_events(events, spool_, counters_);
    return Ok{};
  }
  Status on_memory_map(const format::MemoryMap& map) override {
    spool_.maps.append(map.text);
    if (!spool_.maps.empty() && spool_.maps.back() != '\n') spool_.maps.push_back('\n');
    return Ok{};
  }
  void on_malformed(const format::Chunk&, const Error&) override { ++counters_.malformed_chunks; }

 private:
  SpoolData& spool_;
  InstrumentCounters& counters_;
};

std::optional<SpoolData> read_spool(const std::string& path, InstrumentedProfile& out) {
  InstrumentCounters& counters = out.counters;
  auto reader = format::SpoolReader::open(path);
  if (!reader) {
    ++counters.unreadable_spools;
    out.notes.push_back(reader.error().message);
    return std::nullopt;
  }
  ++counters.spools;
  SpoolData spool;
  spool.pid = static_cast<int32_t>(reader->header().pid);
  SpoolVisitor visitor(spool, counters);
  (void)visit_chunks(*reader, visitor);  // the handlers never fail
  const format::SpoolStats& stats = reader->stats();
  counters.damaged_chunks += stats.crc_failures;
  counters.skipped_bytes += stats.skipped_bytes;
  counters.truncated_bytes += stats.truncated_bytes;
  if (!stats.clean_end) ++counters.unclosed_spools;
  if (stats.crc_failures > 0 || stats.resyncs > 0 || stats.truncated_bytes > 0) {
    out.notes.push_back(path + ": damaged spool: " + std::to_string(stats.crc_failures) +
                        " chunks failed their checksum, " + std::to_string(stats.skipped_bytes) +
                        " bytes skipped, " + std::to_string(stats.truncated_bytes) +
                        " bytes truncated; the intact chunks are kept");
  }
  return spool;
}

bool is_calibration(uint64_t address) {
  return address == format::kInstrumentCalibrationOuter ||
         address == format::kInstrumentCalibrationInner;
}

// What one event costs in this process, in the stamps' unit, from the
// runtime's calibration calls (format/instrument_payloads.h): the median gap
// between consecutive events inside the outer calibration call. A median,
// not the outer call's mean: a preemption during the 8,193 gaps would
// otherwise inflate every correction. nullopt without a whole calibration.
std::optional<uint64_t> event_cost(const SpoolData& spool) {
  for (const auto& [tid, thread] : spool.threads) {
    const std::vector<RawEvent>& events = thread.events;
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].address != format::kInstrumentCalibrationOuter || events[i].exit) continue;
      std::vector<uint64_t> gaps;
      for (size_t j = i + 1; j < events.size(); ++j) {
        if (events[j].stamp < events[j - 1].stamp) return std::nullopt;  // damaged
        gaps.push_back(events[j].stamp - events[j - 1].stamp);
        if (events[j].address == format::kInstrumentCalibrationOuter && events[j].exit) {
          if (gaps.size() < 3) return std::nullopt;
          std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
          return gaps[gaps.size() / 2];
        }
        if (!is_calibration(events[j].address)) return std::nullopt;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Drops the calibration events and takes `cost` off every gap between two
// events of a thread (never below zero: a gap shorter than the median cost
// becomes zero), as the profile module's calibration takes its bias off
// every timing. Each event then stands where it would without the hooks.
void subtract_event_cost(SpoolData& spool, uint64_t cost) {
  for (auto& [tid, thread] : spool.threads) {
    std::vector<RawEvent>& events = thread.events;
    std::erase_if(events, [](const RawEvent& e) { return is_calibration(e.address); });
    if (events.empty() || cost == 0) continue;
    uint64_t previous_raw = events[0].stamp;
    for (size_t i = 1; i < events.size(); ++i) {
      const uint64_t raw = events[i].stamp;
      const uint64_t gap = raw > previous_raw ? raw - previous_raw : 0;
      events[i].stamp = events[i - 1].stamp + (gap > cost ? gap - cost : 0);
      previous_raw = raw;
    }
  }
}

}  // namespace

InstrumentedProfile read_instrument_spools(const std::vector<std::string>& paths) {
  InstrumentedProfile out;
  analysis::Profile& profile = out.profile;
  profile.mode = analysis::ProfileMode::kInstrumented;
  profile.rate_hz = 0;

  std::vector<SpoolData> spools;
  for (const auto& path : paths) {
    auto spool = read_spool(path, out);
    if (spool) spools.push_back(std::move(*spool));
  }
  // Processes in pid order, threads in tid order: deterministic output
  // whatever order the directory listed the files in.
  std::sort(spools.begin(), spools.end(),
            [](const SpoolData& a, const SpoolData& b) { return a.pid < b.pid; });

  symbolize::Symbolizer symbolizer;
  std::set<std::pair<int32_t, int32_t>> threads_seen;
  for (SpoolData& spool : spools) {
    const std::optional<uint64_t> cost = event_cost(spool);
    subtract_event_cost(spool, cost.value_or(0));
    if (cost) {
      // Per call (an enter and an exit), in ns, for the header.
      const bool tsc = !spool.threads.empty() &&
                       spool.threads.begin()->second.clock == format::InstrumentClock::kTsc;
      const double ns = tsc ? static_cast<double>(spool.calibration.to_ns(
                                  spool.calibration.ref_ticks + *cost) - spool.calibration.ref_ns)
                            : static_cast<double>(*cost);
      out.calibrated_processes += 1;
      out.overhead_ns_per_call = std::max(out.overhead_ns_per_call, 2 * ns);
    } else {
      out.uncalibrated_processes += 1;
    }
    // Later snapshots' lines come later and win where they overlap.
    symbolize::AddressSpace space = symbolize::address_space_from_maps(spool.pid, spool.maps);
    analysis::ProcessInfo process;
    process.pid = spool.pid;
    process.command = spool.command.value_or("");
    profile.processes.push_back(std::move(process));

    std::map<uint64_t, analysis::FrameId> frame_of;
    auto frame_for = [&](uint64_t address) {
      auto it = frame_of.find(address);
      if (it != frame_of.end()) return it->second;
      // The address is the function's entry (what -finstrument-functions
      // passes), not a return address; its last frame is the function itself
      // rather than a call inlined at its first instruction.
      std::vector<symbolize::Frame> frames = symbolizer.symbolize(space, address, false);
      analysis::Frame frame;
      if (!frames.empty()) {
        const symbolize::Frame& f = frames.back();
        frame.module = f.module;
        if (f.has_symbol) {
          frame.function = f.function;
          frame.file = f.decl_file.empty() ? f.file : f.decl_file;
          frame.line = f.decl_line;
        } else {
          frame.module_offset = f.module_offset;
          ++out.counters.unsymbolized_functions;
        }
      }
      analysis::FrameId id = profile.frames.intern(frame);
      frame_of.emplace(address, id);
      return id;
    };

    for (auto& [tid, raw] : spool.threads) {
      analysis::ThreadCalls calls;
      calls.pid = raw.pid;
      calls.tid = raw.tid;
      calls.events.reserve(raw.events.size());
      for (const RawEvent& e : raw.events) {
        analysis::CallEvent ev;
        ev.time_ns = raw.clock == format::InstrumentClock::kTsc ? spool.calibration.to_ns(e.stamp)
                                                                : static_cast<int64_t>(e.stamp);
        ev.kind = e.exit ? analysis::CallKind::kExit : analysis::CallKind::kEnter;
        ev.frame = frame_for(e.address);
        calls.events.push_back(ev);
      }
      out.counters.events += calls.events.size();
      threads_seen.emplace(raw.pid, raw.tid);
      analysis::ThreadInfo info;
      info.pid = raw.pid;
      info.tid = raw.tid;
      auto name = spool.thread_names.find(tid);
      if (name != spool.thread_names.end()) info.name = name->second;
      profile.threads.push_back(std::move(info));
      profile.calls.push_back(std::move(calls));
    }
    for (const auto& [tid, name] : spool.thread_names) {
      if (threads_seen.count({spool.pid, tid})) continue;
      profile.threads.push_back(analysis::ThreadInfo{tid, spool.pid, name});
    }
  }
  if (out.counters.dropped_events > 0) {
    out.notes.push_back(std::to_string(out.counters.dropped_events) +
                        " instrumentation events were dropped by the runtime; counts of the "
                        "functions they belonged to are low by at most that many");
  }
  if (out.counters.malformed_chunks > 0) {
    out.notes.push_back(std::to_string(out.counters.malformed_chunks) +
                        " spool chunks had payloads of the wrong size and were skipped");
  }
  return out;
}

}  // namespace strata::import
