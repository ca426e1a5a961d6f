#include "html/timeline_lod.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/global_id.h"

using strata::global_id::make_pid;
using strata::global_id::pid_of;
using strata::global_id::tid_of;

namespace strata::html {
namespace {

// The most events of one track the page draws one by one (page.js: RAW_DRAW_LIMIT).
constexpr size_t kRawDrawLimit = 40'000;

// Event kinds the page colours apart.
enum Kind : int { kSlice = 0, kMemcpy = 1, kMemset = 2 };

struct Event {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t name = 0;
  int kind = kSlice;
  int64_t correlation = 0;  // API calls and GPU ops; 0: none
  int depth = 0;
};

struct Track {
  std::string name;   // "CUDA API", "NVTX", "stream 7", ...
  std::string group;  // "python3 (pid 12) · thread 12", "GPU 0"
  std::string kind;   // "api", "nvtx", "op", "gpu"
  int64_t pid = 0;
  std::vector<Event> events;
};

class Names {
 public:
  uint32_t id(const std::string& name) {
    auto [it, added] = ids_.try_emplace(name, static_cast<uint32_t>(list_.size()));
    if (added) list_.push_back(name);
    return it->second;
  }
  const std::vector<std::string>& list() const { return list_; }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> list_;
};

std::string process_label(const exporter::GpuTimeline& t, int64_t pid) {
  auto it = t.process_names.find(make_pid(pid));
  std::string name = it != t.process_names.end() && !it->second.empty() ? it->second : "process";
  return name + " (pid " + std::to_string(pid) + ")";
}

std::string thread_label(const exporter::GpuTimeline& t, int64_t global_tid) {
  std::string label =
      process_label(t, pid_of(global_tid)) + " · thread " + std::to_string(tid_of(global_tid));
  auto it = t.thread_names.find(global_tid);
  if (it != t.thread_names.end() && !it->second.empty()) label += " " + it->second;
  return label;
}

// Nesting depth by start: how many earlier events still enclose each one.
void assign_depths(std::vector<Event>& events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.start, b.end) < std::tie(b.start, a.end);
  });
  std::vector<int64_t> open;
  for (auto& e : events) {
    while (!open.empty() && open.back() <= e.start) open.pop_back();
    e.depth = static_cast<int>(open.size());
    open.push_back(std::max(e.end, e.start));
  }
}

struct Bin {
  uint32_t count = 0;
  double covered = 0;
  int64_t longest = -1;
  uint32_t name = 0;
};

// One level: nullopt-like empty json when it would exceed max_bins.
nlohmann::json level(const std::vector<Event>& events, int64_t t0, double width, size_t max_bins) {
  std::unordered_map<uint64_t, Bin> bins;
  for (const auto& e : events) {
    const double s = static_cast<double>(e.start - t0);
    const double en = static_cast<double>(std::max(e.end, e.start) - t0);
    const uint64_t b0 = static_cast<uint64_t>(s / width);
    const uint64_t b1 = std::max(b0, static_cast<uint64_t>(en / width));
    for (uint64_t b = b0; b <= b1; ++b) {
      Bin& bin = bins[b];
      if (bins.size() > max_bins) return nullptr;
      const double lo = std::max(s, static_cast<double>(b) * width);
      const double hi = std::min(en, static_cast<double>(b + 1) * width);
      bin.count += 1;
      bin.covered += std::max(0.0, hi - lo);
      if (e.end - e.start > bin.longest) {
        bin.longest = e.end - e.start;
        bin.name = e.name;
      }
    }
  }
  std::vector<uint64_t> keys;
  keys.reserve(bins.size());
  for (const auto& [k, v] : bins) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  nlohmann::json index = nlohmann::json::array(), count = nlohmann::json::array(),
                 busy = nlohmann::json::array(), name = nlohmann::json::array();
  uint64_t previous = 0;
  for (uint64_t k : keys) {
    const Bin& bin = bins[k];
    index.push_back(k - previous);
    previous = k;
    count.push_back(bin.count);
    busy.push_back(std::min<int64_t>(1000, std::llround(bin.covered / width * 1000)));
    name.push_back(bin.name);
  }
  return {{"w", width}, {"i", index}, {"c", count}, {"b", busy}, {"n", name}};
}

}  // namespace

nlohmann::json timeline_lod(const exporter::GpuTimeline& t, const TimelineLodOptions& options) {
  Names names;
  // Tracks keyed so that they sort as the page shows them: per process its
  // threads (NVTX, ops, CUDA calls), its start/end ranges, then GPU streams.
  std::map<std::tuple<int, int64_t, int64_t, int64_t, int>, Track> tracks;
  auto thread_track = [&](int64_t global_tid, int order, const char* name,
                          const char* kind) -> Track& {
    Track& tr = tracks[{0, pid_of(global_tid), tid_of(global_tid), 0, order}];
    if (tr.name.empty()) {
      tr.name = name;
      tr.kind = kind;
      tr.group = thread_label(t, global_tid);
      tr.pid = pid_of(global_tid);
    }
    return tr;
  };
  for (const auto& r : t.nvtx_ranges) {
    Event e{r.start, r.end, names.id(r.domain.empty() ? r.name : r.domain + ": " + r.name)};
    if (r.push_pop) {
      thread_track(r.global_tid, 0, "NVTX", "nvtx").events.push_back(e);
    } else {
      Track& tr = tracks[{1, pid_of(r.global_tid), 0, 0, 0}];
      tr.name = "NVTX start/end";
      tr.kind = "nvtx";
      tr.group = process_label(t, pid_of(r.global_tid));
      tr.pid = pid_of(r.global_tid);
      tr.events.push_back(e);
    }
  }
  for (const auto& op : t.torch_ops) {
    thread_track(op.global_tid, 1, "PyTorch ops", "op")
        .events.push_back(Event{op.start, op.end, names.id(op.name)});
  }
  for (const auto& c : t.api_calls) {
    Event e{c.start, c.end, names.id(c.name)};
    e.correlation = c.correlation_id;
    thread_track(c.global_tid, 2, "CUDA API", "api").events.push_back(e);
  }
  for (const auto& op : t.gpu_ops) {
    const int64_t pid = pid_of(op.global_pid);
    Track& tr = tracks[{2, op.device_id, op.stream_id, pid, 0}];
    if (tr.name.empty()) {
      tr.name = "stream " + std::to_string(op.stream_id);
      tr.kind = "gpu";
      tr.group = "GPU " + std::to_string(op.device_id) + " · " + process_label(t, pid);
      tr.pid = pid;
    }
    Event e{op.start, op.end, names.id(op.name)};
    e.kind = op.kind == exporter::GpuOpKind::kMemcpy   ? kMemcpy
             : op.kind == exporter::GpuOpKind::kMemset ? kMemset
                                                       : kSlice;
    e.correlation = op.correlation_id;
    tr.events.push_back(e);
  }

  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  size_t total = 0;
  for (auto& [key, tr] : tracks) {
    assign_depths(tr.events);
    total += tr.events.size();
    for (const auto& e : tr.events) {
      t0 = std::min(t0, e.start);
      t1 = std::max(t1, std::max(e.start, e.end));
    }
  }
  if (total == 0) t0 = t1 = 0;
  const int64_t span = std::max<int64_t>(1, t1 - t0);

  // Which tracks keep their events one by one.
  std::vector<Track*> order;
  for (auto& [key, tr] : tracks) order.push_back(&tr);
  std::vector<bool> raw(order.size(), total <= options.max_events);
  if (total > options.max_events) {
    size_t kept = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      const size_t n = order[i]->events.size();
      if (n <= options.max_track_events && kept + n <= options.max_events) {
        raw[i] = true;
        kept += n;
      }
    }
  }

  nlohmann::json out_tracks = nlohmann::json::array();
  size_t kept = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const Track& tr = *order[i];
    nlohmann::json j = {{"name", tr.name},
                        {"group", tr.group},
                        {"kind", tr.kind},
                        {"count", tr.events.size()},
                        {"raw", raw[i]}};
    int max_depth = 0;
    for (const auto& e : tr.events) max_depth = std::max(max_depth, e.depth);
    j["depth"] = std::min(max_depth, 15) + 1;
    if (raw[i]) {
      nlohmann::json s = nlohmann::json::array(), d = nlohmann::json::array(),
                     n = nlohmann::json::array(), k = nlohmann::json::array();
      int64_t previous = t0;
      for (const auto& e : tr.events) {
        s.push_back(e.start - previous);
        previous = e.start;
        d.push_back(std::max<int64_t>(0, e.end - e.start));
        n.push_back(e.name);
        k.push_back(std::min(e.depth, 15) * 4 + e.kind);
      }
      j["events"] = {{"s", s}, {"d", d}, {"n", n}, {"k", k}};
      kept += tr.events.size();
    }
    nlohmann::json levels = nlohmann::json::array();
    // A track drawn one by one needs bins only where the page would draw
    // too many events at once (kRawDrawLimit in page.js); finer levels stop
    // once they hold twice as many bins as the track has events: past that
    // they only cut long events into pieces.
    if (!raw[i] || tr.events.size() > kRawDrawLimit) {
      const size_t budget = std::min(options.max_bins, 2 * tr.events.size() + 1024);
      for (int l = 0; l < options.max_levels; ++l) {
        const double width = static_cast<double>(span) / static_cast<double>(1024LL << (2 * l));
        nlohmann::json lv = level(tr.events, t0, width, budget);
        if (lv.is_null()) break;
        levels.push_back(std::move(lv));
        if (width < 50) break;
      }
    }
    j["levels"] = std::move(levels);
    out_tracks.push_back(std::move(j));
  }

  // Launch arrows between events kept one by one.
  std::unordered_map<int64_t, std::pair<uint32_t, uint32_t>>
      launches;  // (pid<<32|corr) -> (track, index)
  auto key = [](int64_t pid, int64_t corr) { return (pid << 40) ^ corr; };
  for (size_t i = 0; i < order.size(); ++i) {
    if (!raw[i] || order[i]->kind != "api") continue;
    const auto& ev = order[i]->events;
    for (size_t k = 0; k < ev.size(); ++k) {
      if (ev[k].correlation != 0) {
        launches.emplace(key(order[i]->pid, ev[k].correlation),
                         std::make_pair(static_cast<uint32_t>(i), static_cast<uint32_t>(k)));
      }
    }
  }
  nlohmann::json arrows = nlohmann::json::array();
  for (size_t i = 0; i < order.size(); ++i) {
    if (!raw[i] || order[i]->kind != "gpu") continue;
    const auto& ev = order[i]->events;
    for (size_t k = 0; k < ev.size(); ++k) {
      if (ev[k].correlation == 0) continue;
      auto it = launches.find(key(order[i]->pid, ev[k].correlation));
      if (it == launches.end()) continue;
      arrows.push_back(it->second.first);
      arrows.push_back(it->second.second);
      arrows.push_back(i);
      arrows.push_back(k);
    }
  }
  return {{"t0", t0},         {"span", span}, {"names", names.list()}, {"tracks", out_tracks},
          {"arrows", arrows}, {"kept", kept}, {"events", total}};
}

}  // namespace strata::html
