// The link from PyTorch ops to the CUDA calls they made, found by the one
// clock both are read from (issue 18 item 1, docs/torch-ops.md).
//
// libstrata_torch stamps each op's start and end with CLOCK_MONOTONIC on the
// op's thread, and the CUDA agent puts CUPTI's timestamps on the same clock
// (its timestamp callback). On one thread the op's start, the start of every
// CUDA call made inside it and the op's end are reads of one clock in program
// order, so the innermost op open around a call's start is the op that made
// the call: what CUPTI's external correlation would record if each op pushed
// its id (Kineto's way, two CUPTI calls per op), at no cost while the program
// runs. On three H100 traces recorded with both, the two agreed on every one
// of 23,285 calls (docs/PERFORMANCE.md).
//
// The links go into strata_external_correlation as kind CUSTOM0 rows, the
// rows a pushed id would have made, so every reader of the table (the op
// table, the exports, diagnose) reads both alike. Processes that have such
// rows already (traces of older versions) or whose ops pushed their ids
// (format::kTorchOpPushed: the agent on CUPTI's own clock,
// STRATA_AGENT_CLOCK=cupti) are left as they are.
//
// Threading: one thread, the writer's.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "store/torch_op_rows.h"
#include "store/trace_db.h"

namespace strata::import {

using store::CallStart;
using store::OpSpan;

// For each call, the innermost op of its thread with start <= call start <=
// end (the latest-started one of those open), as a CUSTOM0 row; calls outside
// every op get none. Any order in; the rows come out in (thread, start) order.
std::vector<store::ExternalCorrelationRow> link_calls_to_ops(std::vector<OpSpan> ops,
                                                             std::vector<CallStart> calls);

// Links, in `writer`'s open transaction, the runtime and driver API calls of
// every process that has ops, none of them pushed, and no
// strata_external_correlation row; returns how many calls it linked.
Result<uint64_t> link_torch_ops_by_clock(store::TraceWriter& writer);

}  // namespace strata::import
