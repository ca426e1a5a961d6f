// End to end: traces whose CPU profile is hostile (a stack 100,000 frames
// deep, a 50,000-character function name) go through `strata export` and
// `strata report --filter` without crashing (issue 21: these exited 139).
// The traces are written with the store's CPU writer, as `strata cpu` does.
#include <gtest/gtest.h>

#include <string>

#include "analysis/cpu_profile.h"
#include "analysis/cpu_profile_rows_convert.h"
#include "cli/cli_runner.h"
#include "store/cpu_profile_rows.h"
#include "store/trace_db.h"

namespace strata {
namespace {

using testing::run_strata;
using testing::ScratchDir;

void write_trace(const std::string& path, const analysis::Profile& profile) {
  store::RunInfo run;
  run.verb = "cpu";
  run.command = {"./app"};
  run.start_ns = 1'000'000'000;
  run.end_ns = 2'000'000'000;
  run.exit_status = 0;
  auto writer = store::TraceWriter::create(path, true);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  ASSERT_TRUE(writer->write_run(run).ok());
  Status s = store::write_cpu_profile(*writer, analysis::to_rows(profile));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(writer->commit().ok());
}

analysis::FrameId frame(analysis::Profile& p, const std::string& name) {
  analysis::Frame f;
  f.function = name;
  f.file = "f.cc";
  f.line = 1;
  f.module = "/bin/app";
  return p.frames.intern(f);
}

// One sample whose stack is `depth` frames of one recursive function under main.
analysis::Profile deep_profile(size_t depth) {
  analysis::Profile p;
  p.rate_hz = 1000;
  std::vector<analysis::FrameId> stack(depth, frame(p, "recurse"));
  stack.push_back(frame(p, "main"));
  p.samples.push_back({1, 1, 0, 1'000'000, stack});
  return p;
}

TEST(HostileTraceCli, DeepStackExportsWithoutCrashing) {
  ScratchDir dir;
  write_trace(dir.file("t.sqlite"), deep_profile(100'000));
  for (const char* format : {"folded", "svg", "speedscope"}) {
    auto r = run_strata(std::string("export t.sqlite --format ") + format + " -o out", dir.path());
    EXPECT_EQ(r.status, 0) << format << ": " << r.err;
    std::string out = testing::read_file(dir.path() / "out");
    EXPECT_FALSE(out.empty()) << format;
    if (std::string(format) == "folded") {
      // One line: main, then 100,000 times recurse, then the count.
      EXPECT_EQ(out.size(), std::string("main").size() + 100'000 * std::string(";recurse").size() +
                                std::string(" 1\n").size());
    }
    if (std::string(format) == "svg") {
      EXPECT_EQ(out.substr(out.size() - 7), "</svg>\n");
    }
    std::filesystem::remove(dir.path() / "out");
  }
}

TEST(HostileTraceCli, LongNameWithFilterDoesNotCrash) {
  ScratchDir dir;
  analysis::Profile p;
  p.rate_hz = 1000;
  std::string long_name = "begin_" + std::string(50'000, 'x') + "_end";
  p.samples.push_back({1, 1, 0, 1'000'000, {frame(p, long_name), frame(p, "main")}});
  write_trace(dir.file("t.sqlite"), p);
  auto r = run_strata("report t.sqlite --filter 'begin_.*_end' --format csv", dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(long_name), std::string::npos);
  EXPECT_EQ(r.out.find("(main)"), std::string::npos);
  r = run_strata("report t.sqlite --filter '(x|y)+_end' --format csv", dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(long_name), std::string::npos);
}

TEST(HostileTraceCli, InvalidFilterExitsTwoNamingThePattern) {
  ScratchDir dir;
  write_trace(dir.file("t.sqlite"), deep_profile(3));
  auto r = run_strata("report t.sqlite --filter '(unclosed'", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("invalid --filter regex '(unclosed'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace strata
