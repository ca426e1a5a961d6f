#include "analysis/cpu_profile.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <utility>

namespace strata::analysis {

FrameId FrameTable::intern(const Frame& frame) {
  Key key{frame.function,      frame.file,    frame.line,        frame.module,
          frame.module_offset, frame.inlined, frame.python_name, frame.sample_line};
  auto [it, inserted] = index_.try_emplace(std::move(key), static_cast<FrameId>(frames_.size()));
  if (inserted) frames_.push_back(frame);
  return it->second;
}

std::string_view mode_name(ProfileMode mode) {
  switch (mode) {
    case ProfileMode::kPerfEvent:
      return "perf_event";
    case ProfileMode::kInProcess:
      return "in-process";
    case ProfileMode::kInstrumented:
      return "instrumented";
  }
  return "perf_event";
}

int64_t sample_weight_ns(const Profile& profile, const Sample& sample) {
  if (sample.weight_ns > 0) return sample.weight_ns;
  return profile.rate_hz > 0 ? static_cast<int64_t>(1e9 / profile.rate_hz) : 0;
}

namespace {

std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string pstats_label(std::string_view function, std::string_view file, int line,
                         std::string_view module) {
  std::string out;
  if (!file.empty()) {
    out.append(file).append(":").append(std::to_string(line));
  } else if (!module.empty()) {
    out.append(module).append(":0");
  } else {
    return "{" + std::string(function) + "}";
  }
  return out.append("(").append(function).append(")");
}

namespace {

// The source position of each (module, function) that frames name with a
// file, when they all name the same one: a frame of the same function
// without line info (an address the line table does not cover) then gets
// that label too, so one function is one row. Two positions: left apart.
std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> known_positions(
    const FrameTable& frames) {
  std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> out;
  std::set<std::pair<std::string, std::string>> ambiguous;
  for (const Frame& f : frames.frames()) {
    if (f.file.empty() || f.function.empty()) continue;
    auto key = std::make_pair(f.module, f.function);
    auto [it, inserted] = out.try_emplace(key, f.file, f.line);
    if (!inserted && it->second != std::make_pair(f.file, f.line)) ambiguous.insert(key);
  }
  for (const auto& key : ambiguous) out.erase(key);
  return out;
}

}  // namespace

FunctionIndex index_functions(const FrameTable& frames) {
  FunctionIndex index;
  index.of_frame.reserve(frames.size());
  const auto positions = known_positions(frames);
  std::map<std::tuple<std::string, std::string, int, std::string>, uint32_t> ids;
  for (const Frame& f : frames.frames()) {
    Function fn;
    fn.module = std::string(basename(f.module));
    if (!f.function.empty()) {
      fn.name = f.function;
    } else if (!fn.module.empty()) {
      // Unsymbolized code: one row per address, as perf report shows it.
      char hex[24];
      auto end = std::to_chars(hex, hex + sizeof hex, f.module_offset, 16).ptr;
      fn.name = fn.module + "+0x" + std::string(hex, end);
    } else {
      fn.name = "[unknown]";
    }
    fn.file = f.file;
    fn.line = f.line;
    if (fn.file.empty() && !f.function.empty()) {
      if (auto known = positions.find({f.module, f.function}); known != positions.end()) {
        fn.file = known->second.first;
        fn.line = known->second.second;
      }
    }
    std::string key_module = fn.file.empty() ? fn.module : std::string();
    auto [it, inserted] = ids.try_emplace({fn.name, fn.file, fn.line, key_module},
                                          static_cast<uint32_t>(index.functions.size()));
    if (inserted) {
      fn.label = pstats_label(fn.name, fn.file, fn.line, key_module);
      index.functions.push_back(std::move(fn));
    }
    index.of_frame.push_back(it->second);
  }
  return index;
}

BalancedCalls balance_events(const std::vector<CallEvent>& events) {
  BalancedCalls out;
  out.events.reserve(events.size());
  std::vector<FrameId> open;
  int64_t last = events.empty() ? 0 : events.front().time_ns;
  for (const CallEvent& e : events) {
    int64_t t = e.time_ns;
    if (t < last) {
      t = last;
      ++out.reordered_times;
    }
    last = t;
    if (e.kind == CallKind::kEnter) {
      open.push_back(e.frame);
      out.events.push_back({t, e.frame, CallKind::kEnter});
      continue;
    }
    auto match = std::find(open.rbegin(), open.rend(), e.frame);
    if (match == open.rend()) {
      ++out.unmatched_exits;
      continue;
    }
    size_t keep = static_cast<size_t>(open.rend() - match) - 1;  // index of the matching frame
    while (open.size() > keep + 1) {
      out.events.push_back({t, open.back(), CallKind::kExit});
      open.pop_back();
      ++out.closed_by_outer_exit;
    }
    out.events.push_back({t, e.frame, CallKind::kExit});
    open.pop_back();
  }
  while (!open.empty()) {
    out.events.push_back({last, open.back(), CallKind::kExit});
    open.pop_back();
    ++out.closed_at_end;
  }
  return out;
}

}  // namespace strata::analysis
