// PyTorch ops as an instrumented-mode profile: the op tree of each thread as
// enter/exit events, so the exporters of CPU profiles (speedscope's evented
// view, folded stacks, the SVG flame graph) draw it as they draw
// -finstrument-functions calls. Frames are op names in module "[pytorch]".
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"

namespace strata::analysis {

// One op as the profile needs it (store/torch_op_rows.h has the whole row).
struct OpSpan {
  int32_t pid = 0;
  int32_t tid = 0;
  int64_t start = 0;  // ns, CLOCK_MONOTONIC
  int64_t end = 0;
  std::string name;
};

// Per thread, ops in start order (outer first on a tie) become enter/exit
// pairs; an op that overlaps its parent's end without nesting in it (clock
// conversion rounding) is cut at the parent's end, so the events always
// balance.
Profile op_tree_profile(const std::vector<OpSpan>& ops);

// The wire facts of an op row (store::TorchOp) that views need, so that they
// need not read src/format: torch's name of a RecordScope ("function",
// "backward_function", "user_scope", ...; "scope N" for one this build does
// not know), whether the op was still open when written, and the external
// correlation kind libstrata_torch pushes (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0).
std::string torch_scope_name(int64_t scope);
bool torch_op_unfinished(int64_t flags);
inline constexpr int64_t kTorchExternalKind = 3;

}  // namespace strata::analysis
