// The HTML report's one script and one style sheet (src/html/assets/), built
// into the binary with their SHA-256, so the page's Content-Security-Policy
// can allow exactly these two inline blocks and nothing else
// (cmake/embed_html_assets.cmake generates the definitions).
#pragma once

#include <string_view>

namespace strata::html {

extern const std::string_view kPageScript;
extern const std::string_view kPageStyle;
extern const std::string_view kPageScriptSha256Hex;  // 64 hex digits
extern const std::string_view kPageStyleSha256Hex;

}  // namespace strata::html
