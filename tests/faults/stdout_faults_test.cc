// A full (/dev/full) or closed standard output for the verbs that print a
// file's contents: report, info and export -o -. strata must exit 1 with one
// line saying the output could not be written, never 0 with the output lost.
#include <gtest/gtest.h>

#include "faults/fault_harness.h"
#include "faults/output_fixtures.h"
#include "util/temp_dir.h"

namespace strata::faults {
namespace {

struct StdoutCase {
  std::string verb;
  Stdout out;
};

class StdoutFaults : public ::testing::TestWithParam<StdoutCase> {};

TEST_P(StdoutFaults, ExitOneWithOneLine) {
  const StdoutCase c = GetParam();
  const std::string input = input_trace().string();
  std::vector<std::string> args;
  if (c.verb == "report") args = {"report", input};
  if (c.verb == "info") args = {"info", input};
  if (c.verb == "export") args = {"export", input, "--format", "speedscope", "-o", "-"};
  test_util::TempDir dir("strata-faults");
  Launch launch{args, dir.path()};
  launch.out = c.out;
  Finished f = run(launch);
  EXPECT_TRUE(f.exited && f.code == 1) << f.describe() << "\n" << f.err;
  auto errors = error_lines(f.err);
  ASSERT_EQ(errors.size(), 1u) << f.err;
  EXPECT_TRUE(errors[0].starts_with("strata: could not write the output to standard output: "))
      << errors[0];

  // The same command with a working stdout succeeds: the failure is stdout's.
  launch.out = Stdout::kDevNull;
  Finished ok = run(launch);
  EXPECT_TRUE(ok.exited && ok.code == 0) << ok.describe() << "\n" << ok.err;
}

std::vector<StdoutCase> cases() {
  std::vector<StdoutCase> all;
  for (std::string verb : {"report", "info", "export"}) {
    for (Stdout out : {Stdout::kDevFull, Stdout::kClosed}) all.push_back({verb, out});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Faults, StdoutFaults, ::testing::ValuesIn(cases()), [](const auto& info) {
  return info.param.verb + (info.param.out == Stdout::kDevFull ? "_devFull" : "_closed");
});

}  // namespace
}  // namespace strata::faults
