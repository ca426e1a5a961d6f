// A flame graph as one self-contained SVG file drawn by strata: no external
// fonts, styles or scripts, so any browser or image viewer shows it and
// tooltips come from <title>. In a browser, an inline script adds
// flamegraph.pl's click-to-zoom, "Reset Zoom", and "Search" with the matched
// share (export/flamegraph_svg_script.h); viewers without scripts show the
// same static picture. Like Brendan Gregg's FlameGraph,
// the root ("all") is at the bottom and callees stack upwards; children sit
// left to right by name, widths are proportional to samples (or time), and
// colors are a hash of the function name in FlameGraph's "hot" palette, so
// the same input always gives the same bytes. Each frame is
//   <g><title>NAME (SHARE%, N samples)</title><rect .../><text ...>NAME..</text></g>
// with the text truncated to what fits the rectangle (FlameGraph's
// 0.59 x font size per character estimate). Names are made well-formed XML
// whatever their bytes (export/xml_text.h). Frames narrower than
// min_width_px are left out with their callees, as FlameGraph does; their
// time stays in their callers' widths.
#pragma once

#include <string>

#include "analysis/cpu_profile.h"
#include "analysis/cpu_tree.h"

namespace strata::exporter {

struct FlameGraphOptions {
  analysis::CallTreeOptions tree;  // weight, thread roots, thread filter
  std::string title = "Flame Graph";
  double width = 1200;  // px
  double frame_height = 16;
  double font_size = 12;
  double min_width_px = 0.1;
};

inline constexpr double kFlameGraphPadX = 10;  // left and right margins, px

std::string flamegraph_svg(const analysis::Profile& profile, const FlameGraphOptions& options);

}  // namespace strata::exporter
