// JSON that can sit inside an HTML <script type="application/json"> block
// whatever the trace's names hold: the only way data enters the HTML report.
//
// The HTML parser ends a script block at "</script" and treats "<!--" in it
// specially, so every '<', '>' and '&' is written as \u003c, \u003e, \u0026
// (they only occur inside JSON strings, where the escapes mean the same
// characters); U+2028 and U+2029 as \u2028 and \u2029 (JavaScript source
// before ES2019 ended lines at them); control bytes as JSON escapes; invalid
// UTF-8 replaced by U+FFFD. The page reads it with JSON.parse and inserts
// names with textContent only (src/html/assets/page.js).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace strata::html {

std::string script_json(const nlohmann::json& value);

}  // namespace strata::html
