// `strata diagnose --threshold NAME=VALUE` over the rules' one table of
// thresholds (diagnosis_thresholds.h: name, field, range): parsing the flag
// with the verb's error wording, and writing and reading back the thresholds
// a verdict was judged by (strata_diagnose_settings).
//
// Pure: no I/O.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "analysis/diagnosis.h"
#include "analysis/diagnosis_thresholds.h"
#include "common/result.h"

namespace strata::analysis {

using ThresholdName = ThresholdInfo;

// threshold_table(), under the name the verb's code reads it by.
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
