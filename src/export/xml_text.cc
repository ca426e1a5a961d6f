#include "export/xml_text.h"

namespace strata::exporter {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// Length of the valid UTF-8 sequence at s[i] and its code point; 0 when invalid.
size_t decode(std::string_view s, size_t i, char32_t& cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  unsigned char c = b(0);
  size_t n;
  char32_t min;
  if (c < 0x80) {
    cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if (!is_continuation(b(k))) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are invalid UTF-8.
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return n;
}

bool xml_allowed(char32_t cp) {
  if (cp < 0x20) return false;
  return cp != 0xFFFE && cp != 0xFFFF;
}

}  // namespace

std::string xml_safe_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    char32_t cp = 0;
    size_t n = decode(bytes, i, cp);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (xml_allowed(cp)) {
      out.append(bytes.substr(i, n));
    } else {
      out += kReplacement;
    }
    i += n;
  }
  return out;
}

size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += !is_continuation(static_cast<unsigned char>(c));
  return n;
}

std::string truncate_utf8(std::string_view text, size_t max_chars) {
  if (utf8_length(text) <= max_chars) return std::string(text);
  size_t keep = max_chars >= 2 ? max_chars - 2 : 0;
  size_t chars = 0;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    if (!is_continuation(static_cast<unsigned char>(text[i]))) {
      if (chars == keep) break;
      ++chars;
    }
  }
  return std::string(text.substr(0, i)) + (max_chars >= 2 ? ".." : "");
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace strata::exporter
