#include "analysis/cpu_lines.h"

#include <map>
#include <set>

namespace strata::analysis {

Profile by_sample_line(const Profile& profile) {
  return with_changed_frames(profile, [](Frame& f) {
    if (f.sample_line > 0 && !f.file.empty()) f.line = f.sample_line;
  });
}

Result<Annotation> annotate(const Profile& profile, const std::string& name) {
  const FunctionIndex index = index_functions(profile.frames);
  // Samples per matching function, to pick the busiest.
  std::map<uint32_t, int64_t> matched;
  int64_t profile_ns = 0;
  for (const Sample& s : profile.samples) {
    const int64_t w = sample_weight_ns(profile, s);
    profile_ns += w;
    std::set<uint32_t> seen;
    for (FrameId id : s.stack) {
      if (id >= index.of_frame.size()) continue;
      uint32_t fn = index.of_frame[id];
      if (index.functions[fn].name.find(name) == std::string::npos) continue;
      if (seen.insert(fn).second) matched[fn] += w;
    }
  }
  if (matched.empty())
    return make_error("--annotate: no sampled function's name contains '" + name + "'");
  uint32_t chosen = matched.begin()->first;
  for (const auto& [fn, ns] : matched) {
    if (ns > matched[chosen]) chosen = fn;
  }
  const Function& fn = index.functions[chosen];
  Annotation a;
  a.function = fn.name;
  a.file = fn.file;
  a.decl_line = fn.line;
  a.profile_ns = profile_ns;
  for (const auto& [other, ns] : matched) {
    if (other != chosen) a.also_matched.push_back(index.functions[other].label);
  }
  std::map<int, AnnotatedLine> lines;
  for (const Sample& s : profile.samples) {
    const int64_t w = sample_weight_ns(profile, s);
    for (size_t i = 0; i < s.stack.size(); ++i) {
      FrameId id = s.stack[i];
      if (id >= index.of_frame.size() || index.of_frame[id] != chosen) continue;
      // The innermost frame of the function: where it was.
      const int line = profile.frames.at(id).sample_line;
      AnnotatedLine& l = lines[line];
      l.line = line;
      l.total_ns += w;
      a.total_ns += w;
      if (i == 0) {
        l.self_ns += w;
        a.self_ns += w;
      }
      break;
    }
  }
  if (lines.size() == 1 && lines.begin()->first == 0) {
    return make_error("--annotate: " + fn.label +
                      " has no line information (a Python function named by a perf map, or code "
                      "without DWARF line tables)");
  }
  for (const auto& [line, l] : lines) a.lines.push_back(l);
  return a;
}

}  // namespace strata::analysis
