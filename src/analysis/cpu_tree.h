// The merged call tree (root to leaf) that folded stacks and flame graphs
// draw: one node per distinct call path, by function (cpu_profile.h).
// Sampled modes weigh nodes by samples (or sample periods); instrumented mode
// by nanoseconds of wall time between enter and exit. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cpu_profile.h"

namespace strata::analysis {

enum class TreeWeight { kSamples, kTime };

struct CallTreeOptions {
  TreeWeight weight = TreeWeight::kSamples;  // sampled modes only; instrumented is always time
  bool thread_roots = false;  // one child of the root per thread, named "name (tid N)"
  std::vector<int32_t> tids;  // only these threads; empty = all
};

inline constexpr uint32_t kNoFunction = 0xffffffff;

struct CallTreeNode {
  uint32_t function = kNoFunction;  // kNoFunction for the root and thread nodes
  std::string name;                 // function or thread name; the root is "all"
  uint64_t self = 0;
  uint64_t total = 0;              // self + children's totals
  std::vector<uint32_t> children;  // indices into CallTree::nodes, by name then function
};

struct CallTree {
  FunctionIndex index;
  std::vector<CallTreeNode> nodes;  // nodes[0] is the root
  // "samples" or "ns": what self/total count.
  std::string unit;
};

CallTree build_call_tree(const Profile& profile, const CallTreeOptions& options);

}  // namespace strata::analysis
