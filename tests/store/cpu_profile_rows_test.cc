#include "store/cpu_profile_rows.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace strata::store {
namespace {

CpuProfileRows sampled_rows() {
  CpuProfileRows rows;
  rows.source = "sigprof";
  rows.rate_hz = 997.5;
  rows.wall_ns = 2'000'000;
  rows.cpu_ns = 1'500'000;
  rows.minor_faults = 127'363;
  rows.lost_samples = 4;
  rows.throttles = 1;
  rows.frames = {{"leaf", "a.cc", 12, "/bin/a", 0x40, false, "native"},
                 {"work", "app.py", 3, "[perf-9.map]", 0, false, "python"},
                 {"", "", 0, "/lib/x.so", 0x1234, true, "native"},
                 {"builtin_sorted", "bltinmodule.c", 2, "/bin/python3.12", 0x50, false, "native",
                  "built-in method builtins.sorted"}};
  rows.stacks = {{0, 1}, {2}, {3, 1}};
  rows.samples = {{100, 9, 9, 1'000'000, 0}, {200, 9, 10, 1'000'000, 1}, {300, 9, 10, 5, -1, true}};
  rows.threads = {{9, 9, "main"}, {9, 10, "worker"}};
  rows.processes = {{9, "prog --flag"}};
  return rows;
}

Result<std::optional<CpuProfileRows>> round_trip(const std::string& path,
                                                 const CpuProfileRows& rows) {
  STRATA_ASSIGN_OR_RETURN(TraceWriter writer, TraceWriter::create(path, true));
  STRATA_TRY(writer.write_run(testing::sample_run()));
  STRATA_TRY(write_cpu_profile(writer, rows));
  STRATA_TRY(writer.commit());
  STRATA_ASSIGN_OR_RETURN(TraceReader reader, TraceReader::open(path));
  return read_cpu_profile(reader);
}

// A schema-v1 trace has no python_name_id column: it reads, without names.
TEST(CpuProfileRowsStore, VersionOneFramesReadWithoutPythonNames) {
  testing::TempDir dir;
  const std::string path = dir.file("t.sqlite");
  ASSERT_TRUE(round_trip(path, sampled_rows()).ok());
  testing::make_sqlite(path,
                       "ALTER TABLE strata_cpu_frames DROP COLUMN python_name_id;"
                       "ALTER TABLE strata_cpu_samples DROP COLUMN cut;"
                       "UPDATE strata_run SET schema_version = 1");
  auto reader = TraceReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto read = read_cpu_profile(*reader);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  ASSERT_EQ((*read)->frames.size(), 4u);
  EXPECT_EQ((*read)->frames[3].function, "builtin_sorted");
  EXPECT_EQ((*read)->frames[3].python_name, "");
  ASSERT_EQ((*read)->samples.size(), 3u);
  for (const auto& s : (*read)->samples) EXPECT_FALSE(s.cut);
}

// A profile whose target's faults were not known (or a trace from before
// they were recorded) has no cpu.minor_faults counter, and reads back without.
TEST(CpuProfileRowsStore, UnknownFaultsStayUnknown) {
  testing::TempDir dir;
  CpuProfileRows written = sampled_rows();
  written.minor_faults.reset();
  auto read = round_trip(dir.file("t.sqlite"), written);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  EXPECT_FALSE((*read)->minor_faults.has_value());
}

TEST(CpuProfileRowsStore, SampledRowsReadBackAsWritten) {
  testing::TempDir dir;
  CpuProfileRows written = sampled_rows();
  auto read = round_trip(dir.file("t.sqlite"), written);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  const CpuProfileRows& rows = **read;
  EXPECT_EQ(rows.source, "sigprof");
  EXPECT_EQ(rows.rate_hz, 997.5);  // kept in mHz
  EXPECT_EQ(rows.wall_ns, 2'000'000);
  EXPECT_EQ(rows.cpu_ns, 1'500'000);
  EXPECT_EQ(rows.minor_faults, 127'363);
  EXPECT_EQ(rows.lost_samples, 4u);
  EXPECT_EQ(rows.throttles, 1u);
  ASSERT_EQ(rows.frames.size(), 4u);
  for (size_t i = 0; i < rows.frames.size(); ++i) {
    EXPECT_EQ(rows.frames[i].function, written.frames[i].function) << i;
    EXPECT_EQ(rows.frames[i].file, written.frames[i].file) << i;
    EXPECT_EQ(rows.frames[i].line, written.frames[i].line) << i;
    EXPECT_EQ(rows.frames[i].module, written.frames[i].module) << i;
    EXPECT_EQ(rows.frames[i].module_offset, written.frames[i].module_offset) << i;
    EXPECT_EQ(rows.frames[i].inlined, written.frames[i].inlined) << i;
    EXPECT_EQ(rows.frames[i].kind, written.frames[i].kind) << i;
    EXPECT_EQ(rows.frames[i].python_name, written.frames[i].python_name) << i;
  }
  EXPECT_EQ(rows.stacks, written.stacks);
  ASSERT_EQ(rows.samples.size(), 3u);
  for (size_t i = 0; i < rows.samples.size(); ++i) {
    EXPECT_EQ(rows.samples[i].time_ns, written.samples[i].time_ns) << i;
    EXPECT_EQ(rows.samples[i].pid, written.samples[i].pid) << i;
    EXPECT_EQ(rows.samples[i].tid, written.samples[i].tid) << i;
    EXPECT_EQ(rows.samples[i].weight_ns, written.samples[i].weight_ns) << i;
    EXPECT_EQ(rows.samples[i].stack, written.samples[i].stack) << i;
    EXPECT_EQ(rows.samples[i].cut, written.samples[i].cut) << i;
  }
  ASSERT_EQ(rows.threads.size(), 2u);
  EXPECT_EQ(rows.threads[1].tid, 10);
  EXPECT_EQ(rows.threads[1].name, "worker");
  EXPECT_EQ(rows.processes, written.processes);
}

TEST(CpuProfileRowsStore, InstrumentedCallsReadBackWithTheirSource) {
  testing::TempDir dir;
  CpuProfileRows written;
  written.source = "instrumented";
  written.frames = {{"f", "f.cc", 1, "/bin/p", 0x10, false, "native"}};
  written.calls = {{9, 9, 10, 0, false}, {9, 9, 20, 0, true}};
  auto read = round_trip(dir.file("t.sqlite"), written);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  const CpuProfileRows& rows = **read;
  EXPECT_EQ(rows.source, "instrumented");
  EXPECT_TRUE(rows.samples.empty());
  ASSERT_EQ(rows.calls.size(), 2u);
  EXPECT_EQ(rows.calls[1].time_ns, 20);
  EXPECT_TRUE(rows.calls[1].exit);
  EXPECT_EQ(rows.calls[0].pid, 9);
}

TEST(CpuProfileRowsStore, ATraceWithoutCpuDataHasNoProfile) {
  testing::TempDir dir;
  auto read = round_trip(dir.file("t.sqlite"), CpuProfileRows{});
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_FALSE(read->has_value());
}

}  // namespace
}  // namespace strata::store
