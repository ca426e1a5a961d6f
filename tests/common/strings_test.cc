#include "common/strings.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

std::vector<std::string> split_ok(std::string_view line) {
  auto r = split_command_line(line);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : std::vector<std::string>{};
}

TEST(SplitCommandLine, PlainWords) {
  EXPECT_EQ(split_ok("  a  bb\tccc "), (std::vector<std::string>{"a", "bb", "ccc"}));
}

TEST(SplitCommandLine, QuotesAndEscapes) {
  EXPECT_EQ(split_ok(R"(prog 'a b' "c d" e\ f "g\"h" '' x'y'z)"),
            (std::vector<std::string>{"prog", "a b", "c d", "e f", "g\"h", "", "xyz"}));
}

TEST(SplitCommandLine, RefusesShellSyntax) {
  for (const char* line :
       {"a | b", "a > f", "a; b", "a && b", "echo $HOME", "ls *.cc", "echo \"$X\"", "a `b`"}) {
    auto r = split_command_line(line);
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_NE(r.error().message.find("sh -c"), std::string::npos) << r.error().message;
  }
}

TEST(SplitCommandLine, RefusesUnterminatedQuotesAndEmpty) {
  EXPECT_FALSE(split_command_line("a 'b").ok());
  EXPECT_FALSE(split_command_line("a \"b").ok());
  EXPECT_FALSE(split_command_line("a \\").ok());
  EXPECT_FALSE(split_command_line("   ").ok());
}

TEST(ShellQuote, RoundTripsThroughSplit) {
  std::vector<std::string> argv = {"prog", "plain", "with space", "it's", "", "a\"b", "$x|y"};
  EXPECT_EQ(split_ok(join_command(argv)), argv);
}

TEST(ParseNumbers, WholeStringOnly) {
  EXPECT_EQ(parse_double("67.840"), 67.84);
  EXPECT_EQ(parse_double("-1e3"), -1000.0);
  EXPECT_FALSE(parse_double("12ms").has_value());
  EXPECT_FALSE(parse_double("").has_value());
  EXPECT_EQ(parse_int("42"), 42);
  EXPECT_FALSE(parse_int("4.2").has_value());
}

TEST(Printable, EscapesControlBytes) {
  EXPECT_EQ(printable("ok\x1b[31m\n"), "ok\\x1b[31m\\x0a");
  EXPECT_EQ(printable("naïve"), "naïve");
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(Plural, OneAndManyAreSpelledAsGiven) {
  EXPECT_EQ(plural(1, "process", "processes"), "1 process");
  EXPECT_EQ(plural(2, "process", "processes"), "2 processes");  // was "2 processs"
  EXPECT_EQ(plural(0, "thread", "threads"), "0 threads");
  EXPECT_EQ(plural(22, "exit event", "exit events"), "22 exit events");
}

}  // namespace
}  // namespace strata
