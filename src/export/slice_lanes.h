// Spreads the slices of one timeline track over as few lanes as needed so
// that, within each lane, slices nest properly: any two either do not overlap
// or one lies fully inside the other. Chrome's trace viewer and Perfetto
// build a call stack per track from complete ("X") events and mis-nest, cut
// or drop a slice that overlaps its neighbour only partially; a partial
// overlap is moved to another lane (a track of its own in the export)
// instead of being altered.
//
// Pure and deterministic: the result depends only on the input values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::exporter {

struct SliceSpan {
  int64_t start = 0;
  int64_t end = 0;  // >= start
};

struct SliceLanes {
  // order: indices into the input, by start ascending, longer first on equal
  // starts (a parent before its children), input index last; the order in
  // which the slices were placed and in which they are best written out.
  std::vector<size_t> order;
  std::vector<uint32_t> lane;  // per input slice; 0 for all slices that nest
  uint32_t lanes = 0;          // number of lanes used (0 for no slices)
};

// Each slice goes to the lowest lane where it nests: the lane's innermost
// slice still open at its start contains it, or none is open. Touching
// slices (one ends where the next starts) are siblings, not parent and child.
SliceLanes assign_slice_lanes(const std::vector<SliceSpan>& slices);

}  // namespace strata::exporter
