#include "analysis/torch_op_profile.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "format/torch_payloads.h"

namespace strata::analysis {

Profile op_tree_profile(const std::vector<OpSpan>& ops) {
  Profile profile;
  profile.mode = ProfileMode::kInstrumented;
  std::map<std::pair<int32_t, int32_t>, std::vector<const OpSpan*>> by_thread;  // (pid, tid)
  for (const auto& op : ops) by_thread[{op.pid, op.tid}].push_back(&op);
  int64_t first = 0, last = 0;
  bool any = false;
  for (auto& [key, thread_ops] : by_thread) {
    std::stable_sort(thread_ops.begin(), thread_ops.end(), [](const OpSpan* a, const OpSpan* b) {
      if (a->start != b->start) return a->start < b->start;
      return a->end > b->end;
    });
    ThreadCalls calls;
    calls.pid = key.first;
    calls.tid = key.second;
    // Open ops: (end, frame), innermost last.
    std::vector<std::pair<int64_t, FrameId>> open;
    auto close_until = [&](int64_t t) {
      while (!open.empty() && open.back().first <= t) {
        calls.events.push_back({open.back().first, open.back().second, CallKind::kExit});
        open.pop_back();
      }
    };
    for (const OpSpan* op : thread_ops) {
      close_until(op->start);
      Frame frame;
      frame.function = op->name;
      frame.module = "[pytorch]";
      FrameId id = profile.frames.intern(frame);
      int64_t end = std::max(op->start, op->end);
      if (!open.empty()) end = std::min(end, open.back().first);  // nest inside the parent
      calls.events.push_back({op->start, id, CallKind::kEnter});
      open.emplace_back(end, id);
      if (!any || op->start < first) first = op->start;
      if (!any || end > last) last = end;
      any = true;
    }
    close_until(INT64_MAX);
    profile.calls.push_back(std::move(calls));
    profile.threads.push_back({key.second, key.first, ""});
  }
  profile.wall_ns = any ? last - first : 0;
  return profile;
}

std::string torch_scope_name(int64_t scope) {
  if (scope >= 0 && scope < format::kTorchScopeCount) {
    return format::wire_name(format::kTorchScopeNames, static_cast<uint32_t>(scope));
  }
  return "scope " + std::to_string(scope);
}

bool torch_op_unfinished(int64_t flags) {
  return (flags & format::kTorchOpUnfinished) != 0;
}

}  // namespace strata::analysis
