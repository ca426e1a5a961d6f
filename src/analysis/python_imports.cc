#include "analysis/python_imports.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string_view>

#include "analysis/python_view.h"

namespace strata::analysis {
namespace {

// One module in the import tree: the same module imported under two
// different parents is two nodes, as in -X importtime.
struct Node {
  std::string module;
  std::string file;
  int64_t self_ns = 0;
  int64_t cumulative_ns = 0;
  uint64_t samples = 0;
  std::map<std::string, std::unique_ptr<Node>> children;  // by file
};

bool is_module_body(const Frame& f) {
  return is_python_frame(f) && f.function == "<module>";
}

bool is_import_machinery(const Frame& f) {
  return is_python_frame(f) && f.function == "_find_and_load";
}

// The import chain of one stack (leaf first), outermost import first.
std::vector<const Frame*> import_chain(const FrameTable& frames,
                                       const std::vector<FrameId>& stack) {
  std::vector<const Frame*> chain;
  bool importing = false;  // a _find_and_load since the last <module>
  for (size_t i = stack.size(); i-- > 0;) {
    const Frame& f = frames.at(stack[i]);
    if (is_import_machinery(f)) {
      importing = true;
    } else if (is_module_body(f)) {
      if (importing) chain.push_back(&f);
      importing = false;
    }
  }
  return chain;
}

void flatten(const Node& node, int depth, std::vector<ImportRow>& out) {
  std::vector<const Node*> children;
  for (const auto& [file, child] : node.children) children.push_back(child.get());
  std::stable_sort(children.begin(), children.end(), [](const Node* a, const Node* b) {
    return a->cumulative_ns > b->cumulative_ns;
  });
  for (const Node* c : children) {
    out.push_back({c->module, c->file, depth, c->self_ns, c->cumulative_ns, c->samples});
    flatten(*c, depth + 1, out);
  }
}

}  // namespace

std::string module_name_of(const std::string& file) {
  std::string_view path(file);
  if (path.starts_with("<frozen ") && path.ends_with(">")) {
    return std::string(path.substr(8, path.size() - 9));
  }
  // The part after the last directory Python imports from.
  for (std::string_view root : {"/site-packages/", "/dist-packages/", "/lib-dynload/"}) {
    if (size_t at = path.rfind(root); at != std::string_view::npos) {
      path.remove_prefix(at + root.size());
      break;
    }
  }
  // The standard library: .../lib/python3.12/NAME
  if (size_t at = path.rfind("/lib/python3"); at != std::string_view::npos) {
    size_t next = path.find('/', at + 5);
    if (next != std::string_view::npos) path.remove_prefix(next + 1);
  }
  if (path.ends_with(".py")) path.remove_suffix(3);
  if (path.ends_with("/__init__")) path.remove_suffix(9);
  if (size_t slash = path.find_last_of('/');
      slash != std::string_view::npos && !path.empty() && path.front() == '/') {
    path.remove_prefix(slash + 1);  // outside any known root: the file's own name
  }
  std::string name(path);
  std::replace(name.begin(), name.end(), '/', '.');
  return name;
}

PythonStartup python_startup_part(const Profile& view, const Sample& sample) {
  int modules = 0;
  bool loading = false, interpreter = false;
  for (FrameId id : sample.stack) {
    if (id >= view.frames.size()) continue;
    const Frame& f = view.frames.at(id);
    // The view's root for the interpreter running without Python code
    // (python_view.h); a native thread's samples have no such root.
    interpreter = interpreter || (f.function == "interpreter: no Python frame" &&
                                  f.module.empty() && f.file.empty());
    modules += is_python_frame(f) && f.function == "<module>";
    loading = loading || (is_python_frame(f) && f.function == "_find_and_load");
  }
  // The main script is the outermost <module>; any other is an import.
  if (loading || modules >= 2) return PythonStartup::kImport;
  return interpreter ? PythonStartup::kInterpreter : PythonStartup::kNone;
}

ImportTable python_imports(const Profile& view) {
  ImportTable table;
  Node root;
  for (const Sample& s : view.samples) {
    const int64_t w = sample_weight_ns(view, s);
    table.total_ns += w;
    if (s.cut) {
      table.cut_ns += w;
      ++table.cut_samples;
      continue;
    }
    auto chain = import_chain(view.frames, s.stack);
    if (chain.empty()) continue;
    table.import_ns += w;
    Node* node = &root;
    for (const Frame* f : chain) {
      auto& child = node->children[f->file];
      if (!child) {
        child = std::make_unique<Node>();
        child->module = module_name_of(f->file);
        child->file = f->file;
      }
      node = child.get();
      node->cumulative_ns += w;
      ++node->samples;
    }
    node->self_ns += w;
  }
  flatten(root, 0, table.rows);
  return table;
}

}  // namespace strata::analysis
