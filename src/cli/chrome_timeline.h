// The GPU timeline of a trace (strata's or an Nsight Systems export) as the
// Chrome exporter takes it, read from nsys's tables: for
// `strata export --format chrome`.
#pragma once

#include <sqlite3.h>

#include <string>

#include "common/result.h"
#include "export/chrome_trace.h"

namespace strata::cli {

// `file` names the trace in error messages. Absent tables are empty; an
// unreadable one is an error naming the file and the table.
Result<exporter::GpuTimeline> load_gpu_timeline(sqlite3* db, const std::string& file);

}  // namespace strata::cli
