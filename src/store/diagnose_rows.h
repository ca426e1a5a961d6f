// What `strata diagnose` stores beside the layers' own tables so that
// `strata report --report diagnosis` prints the same verdict again: the
// layer log (strata_diagnose_layers) and the settings the verdict was
// judged by (strata_diagnose_settings). docs/formats.md has the tables.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/trace_db.h"

namespace strata::store {

struct DiagnoseLayerRow {
  std::string layer;  // baseline, cpu, timeline, ops, kernels
  bool ran = false;
  std::string reason;
  int64_t elapsed_ns = 0;
};

struct DiagnoseRecord {
  std::vector<DiagnoseLayerRow> layers;                      // in the order considered
  std::vector<std::pair<std::string, std::string>> settings;  // name, value
};

Status write_diagnose_record(TraceWriter& writer, const DiagnoseRecord& record);

// Whether the trace was written by strata diagnose (it has layer rows). A
// file that cannot be read is an error, never "no".
Result<bool> diagnose_record_present(const TraceReader& reader);

// Empty for a trace without the tables. Errors name the file and table.
Result<DiagnoseRecord> read_diagnose_record(const TraceReader& reader);

}  // namespace strata::store
