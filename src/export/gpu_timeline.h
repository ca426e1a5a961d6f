// The GPU timeline the Chrome exporter draws (export/chrome_trace.h), built
// from a trace's nsys-schema tables as store/gpu_tables.h loads them with
// GpuLoadOptions::timeline.
#pragma once

#include "export/chrome_trace.h"
#include "store/gpu_tables.h"

namespace strata::exporter {

// Runtime/driver calls, kernels, copies and memsets in table order (kernels,
// then memcpys, then memsets), NVTX push/pop and start/end ranges by start,
// thread and process names. Names as nsys's summaries show them: kernels
// demangled, copies "[CUDA memcpy <label>]" ("[CUDA memcpy]" for a kind the
// enum lacks), memsets "[CUDA memset]". An NVTX range's text is its textId's
// string when it has a textId, else its text; its domain is named by
// analysis::nvtx_domain_rows, "domain N" where no creation event names it; a
// range never closed lasts until the table's last timestamp. Columns the
// load left empty read as 0.
GpuTimeline gpu_timeline(const store::GpuTables& tables);

}  // namespace strata::exporter
