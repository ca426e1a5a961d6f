#include "html/flame_data.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace strata::html {

nlohmann::json flame_data(const analysis::CallTree& tree, double min_share) {
  nlohmann::json names = nlohmann::json::array(), n = nlohmann::json::array(),
                 v = nlohmann::json::array(), c = nlohmann::json::array();
  std::unordered_map<std::string, uint32_t> ids;
  size_t dropped = 0;
  if (tree.nodes.empty()) return {{"unit", tree.unit}, {"total", 0}, {"names", names}};
  const double floor = static_cast<double>(tree.nodes[0].total) * min_share;
  auto keep = [&](uint32_t i) {
    return i == 0 || static_cast<double>(tree.nodes[i].total) >= floor;
  };
  // Iterative preorder: deep Python recursion must not overflow our stack.
  std::vector<uint32_t> stack{0};
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    const auto& node = tree.nodes[i];
    auto [it, added] = ids.try_emplace(node.name, static_cast<uint32_t>(names.size()));
    if (added) names.push_back(node.name);
    n.push_back(it->second);
    v.push_back(node.total);
    uint32_t kept = 0;
    for (auto child : node.children) {
      if (keep(child)) {
        ++kept;
      } else {
        ++dropped;
      }
    }
    c.push_back(kept);
    for (auto child = node.children.rbegin(); child != node.children.rend(); ++child) {
      if (keep(*child)) stack.push_back(*child);
    }
  }
  return {{"unit", tree.unit},
          {"total", tree.nodes[0].total},
          {"names", names},
          {"n", n},
          {"v", v},
          {"c", c},
          {"dropped", dropped}};
}

}  // namespace strata::html
