// How wide strata's text tables may be (report::set_text_width): names are
// cut to fit a terminal, as `ps` and `top` do, and kept whole where a
// program or a file reads them.
#pragma once

#include <cstddef>
#include <string_view>

namespace strata::cli {

// 0 (no limit) with --wide; else COLUMNS when it holds a number; else the
// width of the terminal on stdout; else (a pipe or a file) 0.
size_t table_width(bool wide);

// COLUMNS' value as a width; 0 when it is not a whole number from 1 to 100000.
size_t parse_columns(std::string_view text);

}  // namespace strata::cli
