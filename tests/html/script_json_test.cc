#include "html/script_json.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace strata::html {
namespace {

TEST(ScriptJson, EscapesWhatCouldEndTheBlock) {
  nlohmann::json v = {{"name", "</script><script>alert(1)</script> & <!-- ]]>"}};
  const std::string out = script_json(v);
  EXPECT_EQ(out.find('<'), std::string::npos);
  EXPECT_EQ(out.find('>'), std::string::npos);
  EXPECT_EQ(out.find('&'), std::string::npos);
  EXPECT_NE(out.find("\\u003c/script\\u003e"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(out), v);  // the same value once parsed
}

TEST(ScriptJson, LineSeparatorsAndControlBytes) {
  nlohmann::json v = "a\u2028b\u2029c\x01\x1f\x7f";
  const std::string out = script_json(v);
  EXPECT_EQ(out, "\"a\\u2028b\\u2029c\\u0001\\u001f\x7f\"");
  EXPECT_EQ(nlohmann::json::parse(out), v);
}

TEST(ScriptJson, InvalidUtf8IsReplaced) {
  nlohmann::json v = std::string("ok\xff\xfe\xc3(");
  const std::string out = script_json(v);
  EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(), "ok\ufffd\ufffd\ufffd(");
}

// Random bytes in names: the output is always valid JSON without the bytes
// that matter to the HTML parser.
TEST(ScriptJson, RandomBytesNeverBreakOut) {
  std::mt19937 rng(22);
  const std::string alphabet =
      std::string("<>&/\"'\\]![-scrip\xe2\x80\xa8\xa9\xff\xc3", 20) + "abc";
  for (int round = 0; round < 2000; ++round) {
    std::string name;
    const int n = rng() % 40;
    for (int i = 0; i < n; ++i) {
      name += rng() % 4 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng() % 256);
    }
    const std::string out = script_json(nlohmann::json{{"n", name}});
    ASSERT_EQ(out.find_first_of("<>&"), std::string::npos) << out;
    ASSERT_EQ(out.find("\xe2\x80\xa8"), std::string::npos);
    ASSERT_EQ(out.find("\xe2\x80\xa9"), std::string::npos);
    ASSERT_NO_THROW(nlohmann::json::parse(out)) << out;
  }
}

}  // namespace
}  // namespace strata::html
