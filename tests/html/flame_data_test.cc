#include "html/flame_data.h"

#include <gtest/gtest.h>

namespace strata::html {
namespace {

analysis::CallTree tree() {
  // all(100) -> main(100) -> {a(60) -> c(60), b(39.99..), tiny(0.001)}
  analysis::CallTree t;
  t.unit = "samples";
  auto node = [&](std::string name, uint64_t total, std::vector<uint32_t> children) {
    analysis::CallTreeNode n;
    n.name = std::move(name);
    n.total = total;
    n.children = std::move(children);
    t.nodes.push_back(n);
  };
  node("all", 100000, {1});
  node("main", 100000, {2, 3, 4});
  node("a", 60000, {5});
  node("b", 39999, {});
  node("tiny", 1, {});
  node("c", 60000, {});
  return t;
}

TEST(FlameData, PreorderWithChildCounts) {
  auto j = flame_data(tree());
  std::vector<std::string> names;
  for (auto i : j["n"]) names.push_back(j["names"][i.get<size_t>()]);
  EXPECT_EQ(names, (std::vector<std::string>{"all", "main", "a", "c", "b"}));
  EXPECT_EQ(j["c"], nlohmann::json({1, 2, 1, 0, 0}));
  EXPECT_EQ(j["v"], nlohmann::json({100000, 100000, 60000, 60000, 39999}));
  EXPECT_EQ(j["dropped"], 1);  // tiny: under 1e-4 of the total
  EXPECT_EQ(j["total"], 100000);
}

TEST(FlameData, KeepsEverythingWithNoFloor) {
  auto j = flame_data(tree(), 0);
  EXPECT_EQ(j["n"].size(), 6u);
  EXPECT_EQ(j["dropped"], 0);
}

TEST(FlameData, DeepTreeWithoutRecursion) {
  analysis::CallTree t;
  t.unit = "samples";
  const uint32_t depth = 200000;
  for (uint32_t i = 0; i < depth; ++i) {
    analysis::CallTreeNode n;
    n.name = i == 0 ? "all" : "recurse";
    n.total = 1;
    if (i + 1 < depth) n.children = {i + 1};
    t.nodes.push_back(n);
  }
  auto j = flame_data(t);
  EXPECT_EQ(j["n"].size(), depth);
  EXPECT_EQ(j["names"].size(), 2u);
}

}  // namespace
}  // namespace strata::html
