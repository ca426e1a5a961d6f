#include "analysis/cpu_tree.h"

#include <algorithm>
#include <map>

namespace strata::analysis {
namespace {

// Child lookup while building; thread nodes are keyed above any function id
// so the two kinds never collide.
class Builder {
 public:
  explicit Builder(CallTree& tree) : tree_(tree) {
    tree_.nodes.push_back(CallTreeNode{kNoFunction, "all", 0, 0, {}});
  }

  uint32_t child(uint32_t parent, uint64_t key, uint32_t function, const std::string& name) {
    auto [it, inserted] =
        ids_.try_emplace({parent, key}, static_cast<uint32_t>(tree_.nodes.size()));
    if (inserted) {
      tree_.nodes.push_back(CallTreeNode{function, name, 0, 0, {}});
      tree_.nodes[parent].children.push_back(it->second);
    }
    return it->second;
  }

  uint32_t function_child(uint32_t parent, uint32_t function) {
    return child(parent, function, function, tree_.index.functions[function].name);
  }

  uint32_t thread_root(const Profile& p, int32_t tid) {
    std::string name;
    for (const ThreadInfo& t : p.threads) {
      if (t.tid == tid) name = t.name;
    }
    std::string tid_text = "tid " + std::to_string(tid);
    std::string label = name.empty() ? tid_text : name + " (" + tid_text + ")";
    return child(0, (uint64_t{1} << 32) | static_cast<uint32_t>(tid), kNoFunction, label);
  }

 private:
  CallTree& tree_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> ids_;
};

void add_samples(const Profile& p, const CallTreeOptions& o, Builder& b, CallTree& tree) {
  std::vector<uint32_t> path;
  for (const Sample& s : p.samples) {
    if (!thread_wanted(o.tids, s.tid)) continue;
    uint64_t v =
        o.weight == TreeWeight::kSamples ? 1 : static_cast<uint64_t>(sample_weight_ns(p, s));
    path.assign(1, 0);
    if (o.thread_roots) path.push_back(b.thread_root(p, s.tid));
    for (auto it = s.stack.rbegin(); it != s.stack.rend(); ++it) {
      if (*it >= tree.index.of_frame.size()) continue;
      path.push_back(b.function_child(path.back(), tree.index.of_frame[*it]));
    }
    for (uint32_t n : path) tree.nodes[n].total += v;
    tree.nodes[path.back()].self += v;
  }
}

void add_calls(const Profile& p, const CallTreeOptions& o, Builder& b, CallTree& tree) {
  struct Open {
    uint32_t node;
    int64_t enter_ns;
    int64_t child_ns;
  };
  for (const ThreadCalls& tc : p.calls) {
    if (!thread_wanted(o.tids, tc.tid)) continue;
    BalancedCalls bc = balance_events(tc.events);
    uint32_t base = o.thread_roots ? b.thread_root(p, tc.tid) : 0;
    std::vector<Open> stack;
    int64_t top_ns = 0;
    for (const CallEvent& e : bc.events) {
      if (e.frame >= tree.index.of_frame.size()) continue;
      if (e.kind == CallKind::kEnter) {
        uint32_t parent = stack.empty() ? base : stack.back().node;
        stack.push_back({b.function_child(parent, tree.index.of_frame[e.frame]), e.time_ns, 0});
        continue;
      }
      Open op = stack.back();
      stack.pop_back();
      int64_t d = e.time_ns - op.enter_ns;
      tree.nodes[op.node].total += static_cast<uint64_t>(d);
      tree.nodes[op.node].self += static_cast<uint64_t>(d - op.child_ns);
      if (stack.empty()) {
        top_ns += d;
      } else {
        stack.back().child_ns += d;
      }
    }
    tree.nodes[0].total += static_cast<uint64_t>(top_ns);
    if (base != 0) tree.nodes[base].total += static_cast<uint64_t>(top_ns);
  }
}

}  // namespace

CallTree build_call_tree(const Profile& profile, const CallTreeOptions& options) {
  CallTree tree;
  tree.index = index_functions(profile.frames);
  Builder b(tree);
  if (is_sampled(profile.mode)) {
    tree.unit = options.weight == TreeWeight::kSamples ? "samples" : "ns";
    add_samples(profile, options, b, tree);
  } else {
    tree.unit = "ns";
    add_calls(profile, options, b, tree);
  }
  for (CallTreeNode& n : tree.nodes) {
    std::sort(n.children.begin(), n.children.end(), [&](uint32_t a, uint32_t c) {
      const CallTreeNode& x = tree.nodes[a];
      const CallTreeNode& y = tree.nodes[c];
      if (x.name != y.name) return x.name < y.name;
      return x.function < y.function;
    });
  }
  return tree;
}

}  // namespace strata::analysis
