// A call tree (analysis/cpu_tree.h) as the HTML report's flame graph reads
// it: nodes in preorder, each its name's index, its total and its number of
// children kept. Nodes below `min_share` of the root's total are left out
// (their time stays in their parent's total, drawn as the parent's own), so
// a profile of millions of paths stays a small file.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/cpu_tree.h"

namespace strata::html {

// {"unit", "total", "names": [...], "n": [...], "v": [...], "c": [...], "dropped"}
nlohmann::json flame_data(const analysis::CallTree& tree, double min_share = 1e-4);

}  // namespace strata::html
