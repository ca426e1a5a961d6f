// The GPU timeline the Chrome exporter draws (export/chrome_trace.h), built
// from a trace's nsys-schema tables as store/gpu_tables.h loads them with
// GpuLoadOptions::timeline.
#pragma once

#include "export/chrome_trace.h"
#include "store/gpu_tables.h"
#include "store/torch_op_rows.h"

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

// Adds a trace's PyTorch ops (store/torch_op_rows.h) and CUPTI's external
// correlation records, so the Chrome export draws the ops on their threads
// with arrows to the kernels they launched. Scopes by torch's names
// ("function", "backward_function", "user_scope", ...).
void add_torch_ops(GpuTimeline& timeline, const store::TorchOpRows& rows);

}  // namespace strata::exporter
