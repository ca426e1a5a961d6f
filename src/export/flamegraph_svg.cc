#include "export/flamegraph_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "export/flamegraph_svg_script.h"
#include "export/xml_text.h"

namespace strata::exporter {
namespace {

constexpr double kCharWidth = 0.59;  // of the font size, FlameGraph's estimate
constexpr double kTextPad = 3;       // px between the rectangle's edge and the text
constexpr size_t kMinChars = 3;      // below this a label is noise; FlameGraph draws none

uint32_t fnv1a(std::string_view s, uint32_t seed) {
  uint32_t h = 2166136261u ^ seed;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

// FlameGraph's "hot" palette: red to yellow, from three hashes of the name.
std::string color(std::string_view name) {
  auto unit = [&](uint32_t seed) { return (fnv1a(name, seed) % 1000) / 1000.0; };
  int r = 205 + static_cast<int>(50 * unit(1));
  int g = static_cast<int>(230 * unit(2));
  int b = static_cast<int>(55 * unit(3));
  return fmt::format("rgb({},{},{})", r, g, b);
}

std::string amount(uint64_t v, const std::string& unit) {
  if (unit == "samples") return fmt::format("{} sample{}", v, v == 1 ? "" : "s");
  return fmt::format("{:.3f} ms", static_cast<double>(v) / 1e6);
}

struct Layout {
  Layout(const analysis::CallTree& t, const FlameGraphOptions& opts) : tree(t), o(opts) {}

  const analysis::CallTree& tree;
  const FlameGraphOptions& o;
  double scale = 0;   // px per unit
  double base_y = 0;  // top of the root's row
  std::string out;
  size_t drawn = 0;

  bool drawn_at_all(uint32_t node) const {
    return static_cast<double>(tree.nodes[node].total) * scale >= o.min_width_px;
  }

  // The deepest level drawn below `root` (0: only the root). Iterative, as
  // is draw_all: the tree is as deep as the input's stacks (issue 21).
  int depth(uint32_t root) const {
    int d = 0;
    std::vector<std::pair<uint32_t, int>> pending{{root, 0}};
    while (!pending.empty()) {
      auto [node, level] = pending.back();
      pending.pop_back();
      d = std::max(d, level);
      for (uint32_t c : tree.nodes[node].children) {
        if (drawn_at_all(c)) pending.push_back({c, level + 1});
      }
    }
    return d;
  }

  void draw_one(uint32_t node, double x, int level) {
    const analysis::CallTreeNode& n = tree.nodes[node];
    double w = static_cast<double>(n.total) * scale;
    double y = base_y - level * o.frame_height;
    std::string name = xml_safe_utf8(n.name);
    double share = tree.nodes[0].total ? 100.0 * n.total / tree.nodes[0].total : 0;
    out += fmt::format("<g><title>{} ({:.2f}%, {})</title>", xml_escape(name), share,
                       amount(n.total, tree.unit));
    out += fmt::format(
        "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\" rx=\"2\" "
        "ry=\"2\"/>",
        x, y, w, o.frame_height - 1, color(n.name));
    double room = (w - 2 * kTextPad) / (o.font_size * kCharWidth);
    size_t chars = room > 0 ? static_cast<size_t>(room) : 0;
    if (chars >= kMinChars) {
      out += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\">{}</text>", x + kTextPad,
                         y + o.frame_height - 4, xml_escape(truncate_utf8(name, chars)));
    }
    out += "</g>\n";
    ++drawn;
  }

  // Pre-order, children left to right from their parent's x; a child too
  // narrow to draw is skipped with its callees but still takes its width.
  void draw_all(uint32_t root, double x) {
    struct Visit {
      uint32_t node;
      int level;
      size_t next_child;
      double child_x;  // where the next child starts
    };
    draw_one(root, x, 0);
    std::vector<Visit> stack{{root, 0, 0, x}};
    while (!stack.empty()) {
      Visit& v = stack.back();
      const std::vector<uint32_t>& children = tree.nodes[v.node].children;
      if (v.next_child == children.size()) {
        stack.pop_back();
        continue;
      }
      uint32_t c = children[v.next_child++];
      double cx = v.child_x;
      v.child_x += static_cast<double>(tree.nodes[c].total) * scale;
      if (!drawn_at_all(c)) continue;
      int level = v.level + 1;
      draw_one(c, cx, level);
      stack.push_back({c, level, 0, cx});  // invalidates `v`
    }
  }
};

}  // namespace

std::string flamegraph_svg(const analysis::Profile& profile, const FlameGraphOptions& o) {
  analysis::CallTree tree = analysis::build_call_tree(profile, o.tree);
  Layout l(tree, o);
  uint64_t total = tree.nodes[0].total;
  double plot = std::max(1.0, o.width - 2 * kFlameGraphPadX);
  l.scale = total ? plot / static_cast<double>(total) : 0;
  int levels = total ? l.depth(0) + 1 : 0;
  double top = o.font_size * 3;  // room for the title
  double height = top + levels * o.frame_height + o.font_size * 2;
  l.base_y = top + (levels - 1) * o.frame_height;

  std::string& out = l.out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"Verdana, sans-serif\" "
      "font-size=\"{:g}\" data-pad-x=\"{:g}\">\n",
      o.width, height, o.width, height, o.font_size, kFlameGraphPadX);
  // Zoom and search (export/flamegraph_svg_script.h); the same bytes for every
  // profile, so CDATA cannot be closed by a name.
  out +=
      "<style>.hide { display: none; } .parent { opacity: 0.5; } "
      "#frames g, #unzoom, #search { cursor: pointer; } "
      "#unzoom, #search, #matched, #details { fill: #333; }</style>\n";
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kFlameGraphScript;
  out += "]]></script>\n";
  out +=
      fmt::format("<rect x=\"0\" y=\"0\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"#f8f8f8\"/>\n",
                  o.width, height);
  out += fmt::format(
      "<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" font-size=\"{:g}\">{}</text>\n",
      o.width / 2, o.font_size * 1.5, o.font_size + 5, xml_escape(xml_safe_utf8(o.title)));
  out +=
      fmt::format("<text id=\"unzoom\" class=\"hide\" x=\"{:g}\" y=\"{:.2f}\">Reset Zoom</text>\n",
                  kFlameGraphPadX, o.font_size * 1.5);
  out += fmt::format(
      "<text id=\"search\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\">Search</text>\n",
      o.width - kFlameGraphPadX, o.font_size * 1.5);
  out += fmt::format(
      "<text id=\"matched\" class=\"hide\" x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"end\"> "
      "</text>\n",
      o.width - kFlameGraphPadX, height - o.font_size * 0.5);
  out += fmt::format("<text id=\"details\" x=\"{:g}\" y=\"{:.2f}\"> </text>\n", kFlameGraphPadX,
                     height - o.font_size * 0.5);
  if (total == 0) {
    out += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\">no samples</text>\n", kFlameGraphPadX,
                       top + o.font_size);
  } else {
    out += "<g id=\"frames\">\n";
    l.draw_all(0, kFlameGraphPadX);
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace strata::exporter
