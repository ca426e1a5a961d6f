#include "export/speedscope.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

namespace strata::exporter {
namespace {

using analysis::CallKind;
using Json = nlohmann::ordered_json;

constexpr char kSchema[] = "https://www.speedscope.app/file-format-schema.json";

std::string thread_name(const analysis::Profile& p, int32_t tid) {
  for (const auto& t : p.threads) {
    if (t.tid == tid && !t.name.empty()) return fmt::format("{} (tid {})", t.name, tid);
  }
  return fmt::format("tid {}", tid);
}

Json frames_json(const analysis::FunctionIndex& index) {
  Json frames = Json::array();
  for (const auto& f : index.functions) {
    Json j = {{"name", f.name}};
    if (!f.file.empty()) j["file"] = f.file;
    if (f.line > 0) j["line"] = f.line;
    frames.push_back(std::move(j));
  }
  return frames;
}

struct Built {
  Json profile;
  int64_t weight = 0;
};

std::vector<Built> sampled_profiles(const analysis::Profile& p,
                                    const analysis::FunctionIndex& index) {
  std::map<int32_t, std::vector<const analysis::Sample*>> by_tid;
  for (const auto& s : p.samples) by_tid[s.tid].push_back(&s);
  std::vector<Built> out;
  for (const auto& [tid, samples] : by_tid) {
    Json stacks = Json::array();
    Json weights = Json::array();
    int64_t total = 0;
    for (const analysis::Sample* s : samples) {
      Json stack = Json::array();
      for (auto it = s->stack.rbegin(); it != s->stack.rend(); ++it) {
        if (*it < index.of_frame.size()) stack.push_back(index.of_frame[*it]);
      }
      int64_t w = analysis::sample_weight_ns(p, *s);
      total += w;
      stacks.push_back(std::move(stack));
      weights.push_back(w);
    }
    Json j = {{"type", "sampled"},
              {"name", thread_name(p, tid)},
              {"unit", "nanoseconds"},
              {"startValue", 0},
              {"endValue", total},
              {"samples", std::move(stacks)},
              {"weights", std::move(weights)}};
    out.push_back({std::move(j), total});
  }
  return out;
}

std::vector<Built> evented_profiles(const analysis::Profile& p,
                                    const analysis::FunctionIndex& index) {
  int64_t t0 = std::numeric_limits<int64_t>::max();
  for (const auto& tc : p.calls) {
    if (!tc.events.empty()) t0 = std::min(t0, tc.events.front().time_ns);
  }
  std::vector<const analysis::ThreadCalls*> threads;
  for (const auto& tc : p.calls) threads.push_back(&tc);
  std::stable_sort(threads.begin(), threads.end(),
                   [](const auto* a, const auto* b) { return a->tid < b->tid; });
  std::vector<Built> out;
  for (const analysis::ThreadCalls* tc : threads) {
    analysis::BalancedCalls b = analysis::balance_events(tc->events);
    Json events = Json::array();
    int64_t start = 0;
    int64_t end = 0;
    for (const auto& e : b.events) {
      if (e.frame >= index.of_frame.size()) continue;
      int64_t at = e.time_ns - t0;
      if (events.empty()) start = at;
      end = at;
      events.push_back({{"type", e.kind == CallKind::kEnter ? "O" : "C"},
                        {"at", at},
                        {"frame", index.of_frame[e.frame]}});
    }
    Json j = {{"type", "evented"},     {"name", thread_name(p, tc->tid)},
              {"unit", "nanoseconds"}, {"startValue", start},
              {"endValue", end},       {"events", std::move(events)}};
    out.push_back({std::move(j), end - start});
  }
  return out;
}

}  // namespace

std::string speedscope_json(const analysis::Profile& profile, const SpeedscopeOptions& options) {
  analysis::FunctionIndex index = analysis::index_functions(profile.frames);
  std::vector<Built> built = analysis::is_sampled(profile.mode) ? sampled_profiles(profile, index)
                                                                : evented_profiles(profile, index);
  size_t active = 0;
  Json profiles = Json::array();
  for (size_t i = 0; i < built.size(); ++i) {
    if (built[i].weight > built[active].weight) active = i;
    profiles.push_back(std::move(built[i].profile));
  }
  Json doc = {{"$schema", kSchema},
              {"shared", {{"frames", frames_json(index)}}},
              {"profiles", std::move(profiles)},
              {"name", options.name},
              {"activeProfileIndex", active},
              {"exporter", options.exporter}};
  // Names from the target may hold invalid UTF-8: replaced, not fatal.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace strata::exporter
