#include "common/output_name.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace strata {
namespace {

OutputNameContext context(std::map<std::string, std::string> vars) {
  OutputNameContext c;
  c.env = [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  c.pid = 4242;
  c.host = "node7";
  return c;
}

TEST(OutputName, PlainNamesStayAsTheyAre) {
  EXPECT_FALSE(has_output_specifiers("trace.sqlite"));
  auto r = expand_output_name("dir/trace.sqlite", context({}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "dir/trace.sqlite");
}

TEST(OutputName, ExpandsEverySpecifier) {
  EXPECT_TRUE(has_output_specifiers("trace-%q{RANK}.sqlite"));
  auto r = expand_output_name("t-%q{RANK}-of-%q{WORLD_SIZE}-%h-%p-100%%.sqlite",
                              context({{"RANK", "3"}, {"WORLD_SIZE", "8"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "t-3-of-8-node7-4242-100%.sqlite");
}

TEST(OutputName, SpecifiersNextToEachOther) {
  auto r = expand_output_name("%h%p%q{A}%%%q{A}", context({{"A", "x"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "node74242x%x");
}

TEST(OutputName, UnsetVariableIsNamed) {
  auto r = expand_output_name("trace-%q{RANK}.sqlite", context({}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "output name 'trace-%q{RANK}.sqlite': environment variable RANK is not set");
}

TEST(OutputName, EmptyVariableIsAnError) {
  auto r = expand_output_name("trace-%q{RANK}.sqlite", context({{"RANK", ""}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("environment variable RANK is empty"), std::string::npos);
}

TEST(OutputName, UnknownSpecifierListsTheKnownOnes) {
  auto r = expand_output_name("trace-%n.sqlite", context({}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "output name 'trace-%n.sqlite': unknown specifier %n (known: %q{VAR}, %p, %h, %%)");
}

TEST(OutputName, EveryProblemInOneLine) {
  auto r = expand_output_name("%q{A}-%z-%q{B}-%", context({{"B", "1"}}));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_NE(m.find("environment variable A is not set"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown specifier %z"), std::string::npos) << m;
  EXPECT_NE(m.find("a lone % at the end"), std::string::npos) << m;
  EXPECT_EQ(m.find("variable B"), std::string::npos) << m;
}

TEST(OutputName, MalformedQ) {
  for (const char* pattern : {"a%q", "a%qRANK", "a%q{RANK"}) {
    auto r = expand_output_name(pattern, context({{"RANK", "0"}}));
    ASSERT_FALSE(r.ok()) << pattern;
    EXPECT_NE(r.error().message.find("%q needs a variable name in braces"), std::string::npos)
        << r.error().message;
  }
  auto r = expand_output_name("a%q{}", context({}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("%q{} names no variable"), std::string::npos);
}

TEST(OutputName, NoHostName) {
  auto c = context({});
  c.host.clear();
  auto r = expand_output_name("t-%h", c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("no host name"), std::string::npos);
}

TEST(OutputName, ControlBytesInNamesArePrintable) {
  auto r = expand_output_name("t-%q{A\x01}", context({}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("A\\x01"), std::string::npos) << r.error().message;
}

TEST(OutputName, ProcessEnvReadsTheEnvironment) {
  ::setenv("STRATA_OUTPUT_NAME_TEST", "v", 1);
  ::unsetenv("STRATA_OUTPUT_NAME_TEST_UNSET");
  auto env = process_env();
  EXPECT_EQ(env("STRATA_OUTPUT_NAME_TEST"), std::optional<std::string>("v"));
  EXPECT_EQ(env("STRATA_OUTPUT_NAME_TEST_UNSET"), std::nullopt);
}

}  // namespace
}  // namespace strata
