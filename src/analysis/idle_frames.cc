#include "analysis/idle_frames.h"

#include <algorithm>
#include <map>

namespace strata::analysis {
namespace {

// "__GI___sched_yield" and "sched_yield@plt" read as "sched_yield"; a
// demangled name loses its parameters.
std::string_view plain_name(std::string_view name) {
  if (name.starts_with("__GI_")) name.remove_prefix(5);
  while (name.starts_with('_')) name.remove_prefix(1);
  size_t end = name.find_first_of("(@");
  return end == std::string_view::npos ? name : name.substr(0, end);
}

std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// caller: the frame that called f (nullptr at the root), for kThreadEntryIn.
const IdleRule* rule_of_frame(const Frame& f, const Frame* caller) {
  const std::string_view name = plain_name(f.function);
  const std::string_view module = file_name(f.module);
  for (const IdleRule& rule : kIdleRules) {
    bool hit = false;
    switch (rule.match) {
      case IdleMatch::kFunction:
        hit = name == rule.pattern;
        break;
      case IdleMatch::kModulePrefix:
        hit = module.starts_with(rule.pattern);
        break;
      case IdleMatch::kThreadEntryIn:
        hit = module.starts_with(rule.pattern) && caller != nullptr &&
              plain_name(caller->function) == "start_thread";
        break;
    }
    if (hit) return &rule;
  }
  return nullptr;
}

}  // namespace

const IdleRule* idle_rule_of(const Profile& profile, const Sample& sample) {
  // The sampled pc's frames: inlined ones, then the function holding them.
  const size_t n = sample.stack.size();
  for (size_t i = 0; i < n; ++i) {
    if (sample.stack[i] >= profile.frames.size()) return nullptr;
    const Frame& f = profile.frames.at(sample.stack[i]);
    const Frame* caller = nullptr;
    if (!f.inlined && i + 1 < n && sample.stack[i + 1] < profile.frames.size())
      caller = &profile.frames.at(sample.stack[i + 1]);
    if (const IdleRule* rule = rule_of_frame(f, caller)) return rule;
    if (!f.inlined) break;
  }
  return nullptr;
}

IdleSummary idle_summary(const Profile& profile) {
  IdleSummary out;
  if (!is_sampled(profile.mode)) return out;
  std::map<std::string_view, IdleShare> by_what;
  std::map<int32_t, std::map<std::string_view, IdleThread>> by_thread;
  int64_t total_ns = 0;
  int64_t idle_ns = 0;
  for (const Sample& s : profile.samples) {
    const int64_t w = sample_weight_ns(profile, s);
    total_ns += w;
    const IdleRule* rule = idle_rule_of(profile, s);
    if (rule == nullptr) continue;
    idle_ns += w;
    ++out.samples;
    IdleShare& share = by_what[rule->what];
    share.what = rule->what;
    ++share.samples;
    share.time_s += static_cast<double>(w) * 1e-9;
    IdleThread& t = by_thread[s.tid][rule->what];
    t.tid = s.tid;
    t.what = rule->what;
    ++t.samples;
    t.time_s += static_cast<double>(w) * 1e-9;
  }
  out.time_s = static_cast<double>(idle_ns) * 1e-9;
  out.share = total_ns > 0 ? static_cast<double>(idle_ns) / static_cast<double>(total_ns) : 0;
  for (auto& [what, share] : by_what) out.by_what.push_back(std::move(share));
  std::stable_sort(out.by_what.begin(), out.by_what.end(),
                   [](const IdleShare& a, const IdleShare& b) { return a.time_s > b.time_s; });
  for (auto& [tid, reasons] : by_thread) {
    IdleThread thread{tid, 0, 0, ""};
    double most = -1;
    for (auto& [what, t] : reasons) {
      thread.samples += t.samples;
      thread.time_s += t.time_s;
      if (t.time_s > most) {
        most = t.time_s;
        thread.what = t.what;
      }
    }
    out.threads.push_back(std::move(thread));
  }
  return out;
}

Profile without_idle(const Profile& profile) {
  Profile out = profile;
  if (!is_sampled(profile.mode)) return out;
  std::erase_if(out.samples,
                [&](const Sample& s) { return idle_rule_of(profile, s) != nullptr; });
  return out;
}

}  // namespace strata::analysis
