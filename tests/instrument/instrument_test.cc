// strata cpu --instrument end to end: instrumented programs with known call
// counts run under run_instrumented, and the pstats analysis must give those
// counts exactly, with cProfile's primitive/recursive split.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "analysis/cpu_pstats.h"
#include "cli/cpu_instrument.h"
#include "common/process.h"
#include "util/temp_dir.h"

namespace strata::cli {
namespace {

using import::InstrumentedProfile;
using import::read_instrument_spools;

namespace fs = std::filesystem;

const analysis::CpuRow* find_row(const analysis::CpuTable& table, const std::string& name) {
  for (const auto& row : table.rows) {
    const std::string& fn = table.functions[row.function].name;
    if (fn.find(name) != std::string::npos) return &row;
  }
  return nullptr;
}

analysis::CpuTable table_of(const analysis::Profile& profile, bool per_thread = false) {
  analysis::CpuTableOptions options;
  options.per_thread = per_thread;
  auto table = analysis::cpu_function_table(profile, options);
  EXPECT_TRUE(table.ok());
  return table.ok() ? *table : analysis::CpuTable{};
}

InstrumentedRun run_probe(const std::vector<std::string>& args) {
  std::vector<std::string> argv{PROBE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  InstrumentOptions options;
  options.output = OutputMode::kDiscard;
  auto run = run_instrumented(argv, options);
  EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.error().message);
  return run.ok() ? std::move(*run) : InstrumentedRun{};
}

using strata::test_util::TempDir;

// The files in `dir`: the spools a run left.
std::vector<std::string> spools_in(const TempDir& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir.path())) out.push_back(e.path().string());
  return out;
}

// Runs argv with STRATA_INSTRUMENT_DIR=dir (or unset when dir is null) and
// the given working directory; returns the exit status.
int run_with_env(const std::vector<std::string>& argv, const char* dir, const std::string& cwd) {
  pid_t pid = fork();
  if (pid == 0) {
    if (dir) {
      setenv("STRATA_INSTRUMENT_DIR", dir, 1);
    } else {
      unsetenv("STRATA_INSTRUMENT_DIR");
    }
    if (chdir(cwd.c_str()) != 0) _exit(126);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(Instrument, ExactCountsWithRecursionSplit) {
  InstrumentedRun run = run_probe({"calls"});
  ASSERT_TRUE(run.process.succeeded());
  EXPECT_EQ(run.data.profile.mode, analysis::ProfileMode::kInstrumented);
  EXPECT_EQ(run.data.counters.dropped_events, 0u);
  EXPECT_EQ(run.data.counters.unclosed_spools, 0u);
  analysis::CpuTable table = table_of(run.data.profile);

  const analysis::CpuRow* fact = find_row(table, "probe::fact");
  ASSERT_NE(fact, nullptr);
  EXPECT_EQ(fact->ncalls, 3u);  // pstats prints 3/1
  EXPECT_EQ(fact->primitive_calls, 1u);

  // is_even(4) -> is_odd(3) -> is_even(2) -> is_odd(1) -> is_even(0).
  const analysis::CpuRow* even = find_row(table, "probe::is_even");
  const analysis::CpuRow* odd = find_row(table, "probe::is_odd");
  ASSERT_NE(even, nullptr);
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(even->ncalls, 3u);
  EXPECT_EQ(even->primitive_calls, 1u);
  EXPECT_EQ(odd->ncalls, 2u);
  EXPECT_EQ(odd->primitive_calls, 1u);

  const analysis::CpuRow* leaf = find_row(table, "probe::leaf");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->ncalls, 5u);
  EXPECT_EQ(leaf->primitive_calls, 5u);

  const analysis::CpuRow* main_row = find_row(table, "main");
  ASSERT_NE(main_row, nullptr);
  EXPECT_EQ(main_row->ncalls, 1u);
  // main holds every other call: its cumtime covers theirs, and times are
  // on the nanosecond clock (not ticks): well under the run's wall time.
  EXPECT_GE(main_row->cumtime_s, fact->cumtime_s + leaf->cumtime_s);
  EXPECT_GT(main_row->cumtime_s, 0.0);
  EXPECT_LT(main_row->cumtime_s, static_cast<double>(run.process.wall_ns) * 1e-9);
  // Symbolized from the probe's own DWARF: pstats' file:line(function).
  EXPECT_NE(fact->label.find("probe.cc:"), std::string::npos) << fact->label;
  ASSERT_EQ(run.data.profile.processes.size(), 1u);
  EXPECT_NE(run.data.profile.processes[0].command.find("calls"), std::string::npos);
}

TEST(Instrument, BufferFlushesKeepEveryEvent) {
  // 300000 calls = 600000 events: four flushes of the 128K-word buffer.
  InstrumentedRun run = run_probe({"many", "300000"});
  ASSERT_TRUE(run.process.succeeded());
  analysis::CpuTable table = table_of(run.data.profile);
  const analysis::CpuRow* leaf = find_row(table, "probe::leaf");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->ncalls, 300000u);
  EXPECT_EQ(run.data.counters.dropped_events, 0u);
  EXPECT_GT(leaf->tottime_s, 0.0);
}

TEST(Instrument, MonotonicClockGivesTheSameCounts) {
  // Where the TSC is not invariant the runtime stamps with clock_gettime;
  // STRATA_INSTRUMENT_CLOCK=monotonic forces that path here.
  setenv("STRATA_INSTRUMENT_CLOCK", "monotonic", 1);
  InstrumentedRun run = run_probe({"many", "100000"});
  unsetenv("STRATA_INSTRUMENT_CLOCK");
  ASSERT_TRUE(run.process.succeeded());
  analysis::CpuTable table = table_of(run.data.profile);
  const analysis::CpuRow* leaf = find_row(table, "probe::leaf");
  const analysis::CpuRow* main_row = find_row(table, "main");
  ASSERT_NE(leaf, nullptr);
  ASSERT_NE(main_row, nullptr);
  EXPECT_EQ(leaf->ncalls, 100000u);
  EXPECT_GT(leaf->tottime_s, 0.0);
  EXPECT_LT(main_row->cumtime_s, static_cast<double>(run.process.wall_ns) * 1e-9);
}

TEST(Instrument, ThreadsAreCountedApart) {
  InstrumentedRun run = run_probe({"threads", "4", "50000"});
  ASSERT_TRUE(run.process.succeeded());
  analysis::CpuTable table = table_of(run.data.profile);
  const analysis::CpuRow* leaf = find_row(table, "probe::leaf");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->ncalls, 200000u);

  analysis::CpuTable per_thread = table_of(run.data.profile, /*per_thread=*/true);
  int worker_rows = 0;
  for (const auto& row : per_thread.rows) {
    if (per_thread.functions[row.function].name.find("probe::leaf") == std::string::npos) continue;
    EXPECT_EQ(row.ncalls, 50000u);
    ++worker_rows;
  }
  EXPECT_EQ(worker_rows, 4);
  int named = 0;
  for (const auto& t : run.data.profile.threads) named += t.name == "probe-worker";
  EXPECT_EQ(named, 4);
}

TEST(Instrument, AbortKeepsRecordedEventsAndClosesOpenFrames) {
  InstrumentedRun run = run_probe({"abort", "70000"});
  ASSERT_TRUE(run.process.signal.has_value());
  EXPECT_EQ(*run.process.signal, SIGABRT);
  EXPECT_EQ(run.data.counters.unclosed_spools, 1u);  // closed from the signal handler
  analysis::CpuTable table = table_of(run.data.profile);
  const analysis::CpuRow* leaf = find_row(table, "probe::leaf");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->ncalls, 70000u);
  const analysis::CpuRow* inner = find_row(table, "probe::crash_inner");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->ncalls, 1u);
  // main, crash_outer and crash_inner never returned.
  EXPECT_GE(analysis::cpu_header(run.data.profile).frames_closed_at_end, 3u);
}

TEST(Instrument, ForkedChildGetsItsOwnSpool) {
  InstrumentedRun run = run_probe({"fork", "1000"});
  ASSERT_TRUE(run.process.succeeded());
  ASSERT_EQ(run.data.profile.processes.size(), 2u);
  EXPECT_EQ(run.data.counters.spools, 2u);
  analysis::CpuTable per_thread = table_of(run.data.profile, /*per_thread=*/true);
  std::vector<uint64_t> counts;
  for (const auto& row : per_thread.rows) {
    if (per_thread.functions[row.function].name.find("probe::leaf") != std::string::npos) {
      counts.push_back(row.ncalls);
    }
  }
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<uint64_t>{1000, 2000}));
}

TEST(Instrument, HotspotNormalizeLineSlowCountEqualsLines) {
  InstrumentOptions options;
  options.output = OutputMode::kDiscard;
  auto run = run_instrumented({HOTSPOT_BIN, "--mode", "slow", "--lines", "600"}, options);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_TRUE(run->process.succeeded());
  analysis::CpuTable table = table_of(run->data.profile);
  const analysis::CpuRow* slow = find_row(table, "normalize_line_slow");
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->ncalls, 600u);
  EXPECT_EQ(slow->primitive_calls, 600u);
  EXPECT_EQ(run->data.counters.dropped_events, 0u);
}

TEST(Instrument, UninstrumentedCommandIsAnError) {
  auto run = run_instrumented({"/bin/true"});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().message,
            "/bin/true wrote no instrumentation events: build it with -finstrument-functions and "
            "link strata::instrument");
}

TEST(Instrument, MissingCommandIsAnError) {
  auto run = run_instrumented({"/nonexistent/strata-probe"});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.error().message.find("cannot start"), std::string::npos) << run.error().message;
}

TEST(Instrument, InactiveWithoutTheEnvironmentVariable) {
  TempDir dir;
  EXPECT_EQ(run_with_env({PROBE_BIN, "many", "1000"}, nullptr, dir.path()), 0);
  EXPECT_EQ(run_with_env({PROBE_BIN, "many", "1000"}, "", dir.path()), 0);
  EXPECT_TRUE(spools_in(dir).empty());
}

TEST(Instrument, SpoolIsPrivate) {
  TempDir dir;
  ASSERT_EQ(run_with_env({PROBE_BIN, "calls"}, dir.path().c_str(), dir.path()), 0);
  auto spools = spools_in(dir);
  ASSERT_EQ(spools.size(), 1u);
  struct stat st = {};
  ASSERT_EQ(stat(spools[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(spools[0].find("instrument-"), std::string::npos);
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(Instrument, DamagedSpoolIsCountedNotFatal) {
  TempDir dir;
  ASSERT_EQ(run_with_env({PROBE_BIN, "many", "100000"}, dir.path().c_str(), dir.path()), 0);
  auto spools = spools_in(dir);
  ASSERT_EQ(spools.size(), 1u);
  InstrumentedProfile clean = read_instrument_spools(spools);
  ASSERT_EQ(clean.counters.damaged_chunks, 0u);
  ASSERT_EQ(clean.counters.events, 200000u + 4);  // leaf, plus run_leaf and main

  // Flip a byte inside the second events chunk (1 MiB), and cut the file short.
  std::vector<char> bytes = read_bytes(spools[0]);
  std::vector<char> damaged = bytes;
  damaged[damaged.size() / 3] ^= 0x5a;
  damaged.resize(damaged.size() - 1000);  // into the exit-time memory map
  write_bytes(spools[0], damaged);
  InstrumentedProfile hurt = read_instrument_spools(spools);
  EXPECT_GE(hurt.counters.damaged_chunks, 1u);
  EXPECT_GT(hurt.counters.truncated_bytes, 0u);
  EXPECT_LT(hurt.counters.events, clean.counters.events);
  EXPECT_GT(hurt.counters.events, 0u);
  EXPECT_FALSE(hurt.notes.empty());
  // The damaged profile still analyses (unbalanced frames are repaired).
  EXPECT_TRUE(analysis::cpu_function_table(hurt.profile, {}).ok());

  // Not a spool at all: counted as unreadable and named in a note.
  write_bytes(spools[0], std::vector<char>(100, 'x'));
  InstrumentedProfile garbage = read_instrument_spools(spools);
  EXPECT_EQ(garbage.counters.unreadable_spools, 1u);
  EXPECT_EQ(garbage.counters.events, 0u);
  ASSERT_EQ(garbage.notes.size(), 1u);
  EXPECT_NE(garbage.notes[0].find(spools[0]), std::string::npos);
}

TEST(Instrument, RandomMutationsNeverCrashTheReader) {
  TempDir dir;
  ASSERT_EQ(run_with_env({PROBE_BIN, "calls"}, dir.path().c_str(), dir.path()), 0);
  auto spools = spools_in(dir);
  ASSERT_EQ(spools.size(), 1u);
  const std::vector<char> original = read_bytes(spools[0]);
  std::mt19937 rng(12345);
  for (int round = 0; round < 300; ++round) {
    std::vector<char> bytes = original;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < edits; ++i) {
      size_t at = rng() % bytes.size();
      bytes[at] = static_cast<char>(rng());
    }
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    write_bytes(spools[0], bytes);
    InstrumentedProfile p = read_instrument_spools(spools);
    EXPECT_TRUE(analysis::cpu_function_table(p.profile, {}).ok());
  }
}

}  // namespace
}  // namespace strata::cli
