// The names `strata diagnose --threshold NAME=VALUE` accepts, one row per
// DiagnosisThresholds field: the one table that parses the flag, prints the
// thresholds a verdict was judged by and reads them back from a trace
// (strata_diagnose_settings). A field the rules add gets its row here;
// docs/diagnose.md gives the reason behind each default.
//
// Pure: no I/O.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "analysis/diagnosis.h"
#include "common/result.h"

namespace strata::analysis {

struct ThresholdName {
  const char* name;                     // as on the command line: min_share
  double DiagnosisThresholds::*field;  // the field it sets
  double min;                           // accepted values: min <= value <= max
  double max;
};

std::span<const ThresholdName> threshold_names();

// Sets the field `assignment` ("NAME=VALUE") names. Errors name the
// assignment and say what is wrong: no '=', an unknown name (with the known
// ones), a value that is not a finite number or is out of its range.
Status set_threshold(DiagnosisThresholds& thresholds, std::string_view assignment);

// Sets the field `name` from its stored text (strata_diagnose_settings);
// the same checks as set_threshold.
Status set_threshold(DiagnosisThresholds& thresholds, std::string_view name,
                     std::string_view value);

// "%.17g" of the field: what the trace stores, read back exactly.
std::string threshold_text(const DiagnosisThresholds& thresholds, const ThresholdName& name);

}  // namespace strata::analysis
