// Text from the target (function names) made safe for an XML document:
// whatever the bytes, the result is well-formed XML 1.0 character data and
// attribute text. Invalid UTF-8, control bytes and the non-characters XML
// forbids become U+FFFD; & < > " ' become entities.
#pragma once

#include <string>
#include <string_view>

namespace strata::exporter {

// Valid UTF-8 holding only characters XML 1.0 allows (tab, LF and CR are
// replaced too: names are single-line).
std::string xml_safe_utf8(std::string_view bytes);

// The first `max_chars` code points of valid UTF-8 text; when text is longer,
// the first max_chars - 2 followed by "..". Never splits a code point.
std::string truncate_utf8(std::string_view text, size_t max_chars);
size_t utf8_length(std::string_view text);

// Escapes & < > " ' in valid UTF-8 (apply xml_safe_utf8 first).
std::string xml_escape(std::string_view text);

}  // namespace strata::exporter
