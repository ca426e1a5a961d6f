#include "export/slice_lanes.h"

#include <algorithm>
#include <numeric>

namespace strata::exporter {

SliceLanes assign_slice_lanes(const std::vector<SliceSpan>& slices) {
  SliceLanes out;
  out.order.resize(slices.size());
  std::iota(out.order.begin(), out.order.end(), size_t{0});
  std::sort(out.order.begin(), out.order.end(), [&](size_t a, size_t b) {
    if (slices[a].start != slices[b].start) return slices[a].start < slices[b].start;
    if (slices[a].end != slices[b].end) return slices[a].end > slices[b].end;
    return a < b;
  });
  out.lane.assign(slices.size(), 0);
  // Per lane, the ends of the slices open at the current start, innermost
  // last. Lanes beyond the first are rare (damaged or oddly timed input), so
  // a linear search over them is cheap.
  std::vector<std::vector<int64_t>> open;
  for (size_t i : out.order) {
    const SliceSpan& s = slices[i];
    uint32_t lane = 0;
    for (; lane < open.size(); ++lane) {
      auto& stack = open[lane];
      // Slices that ended by this start are closed for every later slice too
      // (starts only grow), so popping them is safe even if s goes elsewhere.
      while (!stack.empty() && stack.back() <= s.start) stack.pop_back();
      if (stack.empty() || s.end <= stack.back()) break;
    }
    if (lane == open.size()) open.emplace_back();
    open[lane].push_back(s.end);
    out.lane[i] = lane;
  }
  out.lanes = static_cast<uint32_t>(open.size());
  return out;
}

}  // namespace strata::exporter
