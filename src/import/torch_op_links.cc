#include "import/torch_op_links.h"

#include <sqlite3.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>

#include "analysis/torch_op_profile.h"
#include "common/global_id.h"
#include "common/strings.h"
#include "store/sqlite_util.h"

namespace strata::import {
namespace {

namespace sql = store::sql;

// Runs `query` when `table` exists, calling `row` per result row.
Status each_row(store::TraceWriter& writer, const char* table, const std::string& query,
                const std::function<void(const sql::Statement&)>& row) {
  const std::string what = printable(writer.path());
  STRATA_ASSIGN_OR_RETURN(bool exists, sql::table_exists(writer.handle(), table, what));
  if (!exists) return Ok{};
  STRATA_ASSIGN_OR_RETURN(auto stmt, sql::Statement::prepare(writer.handle(), query, what));
  int rc;
  while ((rc = stmt.step()) == SQLITE_ROW) row(stmt);
  if (rc != SQLITE_DONE) return sql::error(writer.handle(), what);
  return Ok{};
}

}  // namespace

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
  int64_t thread = 0;
  for (const CallStart& call : calls) {
    if (open.empty() || call.global_tid != thread) {
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
  std::set<int64_t> linked;  // processes whose ops pushed their ids
  STRATA_TRY(each_row(writer, "strata_external_correlation",
                      "SELECT DISTINCT globalPid FROM strata_external_correlation",
                      [&](const sql::Statement& s) {
                        linked.insert(global_id::process_of(s.column_int(0)));
                      }));
  auto unlinked = [&](int64_t global_tid) {
    return linked.count(global_id::process_of(global_tid)) == 0;
  };
  std::vector<OpSpan> ops;
  STRATA_TRY(each_row(writer, "strata_torch_ops",
                      "SELECT globalTid, start, end, depth, externalId FROM strata_torch_ops "
                      "WHERE externalId != 0",
                      [&](const sql::Statement& s) {
                        OpSpan op{s.column_int(0), s.column_int(1), s.column_int(2),
                                  s.column_int(3), s.column_int(4)};
                        if (unlinked(op.global_tid)) ops.push_back(op);
                      }));
  if (ops.empty()) return uint64_t{0};
  // Runtime and driver calls alike (nsys's table holds both, by eventClass).
  std::vector<CallStart> calls;
  STRATA_TRY(each_row(writer, "CUPTI_ACTIVITY_KIND_RUNTIME",
                      "SELECT globalTid, start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                      "WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL",
                      [&](const sql::Statement& s) {
                        CallStart call{s.column_int(0), s.column_int(1), s.column_int(2)};
                        if (unlinked(call.global_tid)) calls.push_back(call);
                      }));
  auto links = link_calls_to_ops(std::move(ops), std::move(calls));
  STRATA_TRY(store::write_external_correlations(writer, links));
  return static_cast<uint64_t>(links.size());
}

}  // namespace strata::import
