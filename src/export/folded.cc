#include "export/folded.h"

#include <fmt/format.h>

#include <map>

namespace strata::exporter {
namespace {

void walk(const analysis::CallTree& tree, uint32_t node, std::string& path,
          std::map<std::string, uint64_t>& lines) {
  const analysis::CallTreeNode& n = tree.nodes[node];
  size_t keep = path.size();
  if (node != 0) {
    if (!path.empty()) path += ';';
    path += folded_name(n.name);
  }
  if (n.self > 0) lines[path.empty() ? std::string("[unknown]") : path] += n.self;
  for (uint32_t c : n.children) walk(tree, c, path, lines);
  path.resize(keep);
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
  std::string path;
  walk(tree, 0, path, lines);
  std::string out;
  for (const auto& [stack, count] : lines) out += fmt::format("{} {}\n", stack, count);
  return out;
}

}  // namespace strata::exporter
