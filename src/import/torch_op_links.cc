#include "import/torch_op_links.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include "analysis/torch_op_profile.h"
#include "common/global_id.h"
#include "format/torch_payloads.h"

namespace strata::import {

std::vector<store::ExternalCorrelationRow> link_calls_to_ops(std::vector<OpSpan> ops,
                                                             std::vector<CallStart> calls) {
  // A parent before the children that start with it: by depth at equal starts.
  std::sort(ops.begin(), ops.end(), [](const OpSpan& a, const OpSpan& b) {
    return std::tie(a.global_tid, a.start, a.depth) < std::tie(b.global_tid, b.start, b.depth);
  });
  std::sort(calls.begin(), calls.end(), [](const CallStart& a, const CallStart& b) {
    return std::tie(a.global_tid, a.start) < std::tie(b.global_tid, b.start);
  });
  std::vector<store::ExternalCorrelationRow> links;
  std::vector<const OpSpan*> open;  // ops begun on this thread, latest on top
  size_t next = 0;
  int64_t thread = 0;  // the thread `open` belongs to
  for (const CallStart& call : calls) {
    if (call.global_tid != thread) {
      open.clear();
      thread = call.global_tid;
    }
    while (next < ops.size() && ops[next].global_tid < call.global_tid) ++next;
    for (; next < ops.size() && ops[next].global_tid == call.global_tid &&
           ops[next].start <= call.start;
         ++next) {
      while (!open.empty() && open.back()->end < ops[next].start) open.pop_back();
      open.push_back(&ops[next]);
    }
    // The top has the latest start of the ops still open; ops below it that
    // ended (never below an open one when ops nest) go when they surface.
    while (!open.empty() && open.back()->end < call.start) open.pop_back();
    if (open.empty()) continue;
    links.push_back({global_id::process_of(call.global_tid), analysis::kTorchExternalKind,
                     open.back()->external_id, call.correlation_id});
  }
  return links;
}

Result<uint64_t> link_torch_ops_by_clock(store::TraceWriter& writer) {
  STRATA_ASSIGN_OR_RETURN(auto rows, store::load_clock_link_rows(writer));
  // Processes left as they are: those with CUPTI's rows, and those whose ops
  // pushed their ids (the agent kept CUPTI's clock, so their calls' starts
  // are not on the ops' clock), whether or not any call fell inside an op.
  std::set<int64_t> pushed;
  for (int64_t pid : rows.pushed_pids) pushed.insert(global_id::process_of(pid));
  for (const OpSpan& op : rows.ops) {
    if (op.flags & format::kTorchOpPushed) pushed.insert(global_id::process_of(op.global_tid));
  }
  auto unlinked = [&](int64_t global_tid) {
    return pushed.count(global_id::process_of(global_tid)) == 0;
  };
  std::erase_if(rows.ops, [&](const OpSpan& op) { return !unlinked(op.global_tid); });
  if (rows.ops.empty()) return uint64_t{0};
  std::erase_if(rows.calls, [&](const CallStart& call) { return !unlinked(call.global_tid); });
  auto links = link_calls_to_ops(std::move(rows.ops), std::move(rows.calls));
  STRATA_TRY(store::write_external_correlations(writer, links));
  return static_cast<uint64_t>(links.size());
}

}  // namespace strata::import
