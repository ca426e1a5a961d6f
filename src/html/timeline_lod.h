// The HTML report's timeline data: one track per CPU thread's CUDA calls,
// NVTX ranges and PyTorch ops, per process's start/end ranges, and per GPU
// stream's kernels, copies and memsets, each with levels of detail computed
// here so the page pans and zooms a 1M-kernel trace without holding it.
//
// A track keeps its events one by one (start, duration, name, nesting depth,
// kind) when the whole timeline has at most `max_events` of them; otherwise
// tracks above `max_track_events` keep only their aggregated levels. A level
// cuts the trace's span into 1024 * 4^k equal bins and gives, per bin that
// holds anything, the events touching it, the share of it they cover and the
// name of the longest; levels stop when one would exceed `max_bins` bins.
// Launch arrows (API call -> the kernel or copy of its correlation id, in
// the same process) join events that are kept one by one. The full trace
// stays in the SQLite file; the page says so where it shows bins.
//
// Pure; deterministic: equal timelines give equal JSON.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "export/chrome_trace.h"

namespace strata::html {

struct TimelineLodOptions {
  size_t max_events = 200'000;       // events kept one by one across all tracks
  size_t max_track_events = 20'000;  // a track above this keeps bins only, when over max_events
  size_t max_bins = 65'536;          // nonempty bins of one level of one track
  int max_levels = 9;
};

// {"t0", "span", "names": [...], "tracks": [...], "arrows": [...], "kept", "events"}
// (src/html/assets/page.js reads it; docs/reports.md describes it).
nlohmann::json timeline_lod(const exporter::GpuTimeline& timeline,
                            const TimelineLodOptions& options = {});

}  // namespace strata::html
