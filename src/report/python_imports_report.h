// `--imports`: a Python program's import time per module, laid out as
// `python -X importtime` prints it (self and cumulative in microseconds, the
// package indented by its depth), with a line saying how much of the
// profile the imports took. CSV and JSON: one row per module with its depth.
#pragma once

#include <string>

#include "analysis/python_imports.h"
#include "report/table.h"

namespace strata::report {

// `limit` rows at most (0: all), in the table's depth-first order.
std::string render_python_imports(const analysis::ImportTable& imports, size_t limit,
                                  Format format);

}  // namespace strata::report
