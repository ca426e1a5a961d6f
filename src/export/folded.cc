#include "export/folded.h"

#include <fmt/format.h>

#include <map>
#include <vector>

namespace strata::exporter {
namespace {

// Depth-first over the tree with an explicit stack, not recursion: a stack
// can be as deep as the input says (issue 21: 100,000 frames overflowed the
// thread's stack). Each entry is a node, the next child to visit and the
// length of `path` before the node's name was appended.
void walk(const analysis::CallTree& tree, std::map<std::string, uint64_t>& lines) {
  struct Visit {
    uint32_t node;
    size_t next_child;
    size_t keep;
  };
  std::string path;
  std::vector<Visit> stack;
  auto enter = [&](uint32_t node) {
    const analysis::CallTreeNode& n = tree.nodes[node];
    size_t keep = path.size();
    if (node != 0) {
      if (!path.empty()) path += ';';
      path += folded_name(n.name);
    }
    if (n.self > 0) lines[path.empty() ? std::string("[unknown]") : path] += n.self;
    stack.push_back({node, 0, keep});
  };
  enter(0);
  while (!stack.empty()) {
    Visit& v = stack.back();
    const std::vector<uint32_t>& children = tree.nodes[v.node].children;
    if (v.next_child < children.size()) {
      enter(children[v.next_child++]);  // may reallocate: `v` is not used after this
    } else {
      path.resize(v.keep);
      stack.pop_back();
    }
  }
}

}  // namespace

std::string folded_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == ';') {
      out += ':';
    } else if (u < 0x20 || u == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? std::string("[unknown]") : out;
}

std::string folded_stacks(const analysis::Profile& profile, const FoldedOptions& options) {
  analysis::CallTree tree = analysis::build_call_tree(profile, options);
  std::map<std::string, uint64_t> lines;
  walk(tree, lines);
  std::string out;
  for (const auto& [stack, count] : lines) out += fmt::format("{} {}\n", stack, count);
  return out;
}

}  // namespace strata::exporter
