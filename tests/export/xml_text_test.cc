#include "export/xml_text.h"

#include <gtest/gtest.h>

namespace strata::exporter {
namespace {

TEST(XmlText, EscapesMarkup) {
  EXPECT_EQ(xml_escape("a<b>&\"c\"'"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;");
}

TEST(XmlText, ReplacesInvalidUtf8AndControlBytes) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(xml_safe_utf8("ok"), "ok");
  EXPECT_EQ(xml_safe_utf8("\x01x\x1f"), fffd + "x" + fffd);
  EXPECT_EQ(xml_safe_utf8("\xff"), fffd);
  EXPECT_EQ(xml_safe_utf8("\xC0\x80"), fffd + fffd);             // overlong NUL
  EXPECT_EQ(xml_safe_utf8("\xED\xA0\x80"), fffd + fffd + fffd);  // a UTF-16 surrogate
  EXPECT_EQ(xml_safe_utf8("\xEF\xBF\xBF"), fffd);                // U+FFFF, not an XML character
  EXPECT_EQ(xml_safe_utf8("\xE2\x82"), fffd + fffd);             // truncated sequence
  EXPECT_EQ(xml_safe_utf8("caf\xC3\xA9 \xF0\x9F\x94\xA5"), "caf\xC3\xA9 \xF0\x9F\x94\xA5");
}

TEST(XmlText, TruncatesByCodePoints) {
  EXPECT_EQ(truncate_utf8("abcdef", 6), "abcdef");
  EXPECT_EQ(truncate_utf8("abcdefg", 6), "abcd..");
  EXPECT_EQ(truncate_utf8("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3), "\xC3\xA9..");
  EXPECT_EQ(utf8_length("\xC3\xA9x"), 2u);
}

}  // namespace
}  // namespace strata::exporter
