// import::read_instrument_spools on spools laid out by hand as
// strata::instrument writes them (format/instrument_payloads.h): events and
// their clocks, symbolization against the recorded maps, threads, processes,
// and every kind of trouble counted rather than fatal.
#include "import/instrument_profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "format/byte_order.h"
#include "format/instrument_payloads.h"
#include "format/spool_writer.h"
#include "util/temp_dir.h"

extern "C" __attribute__((noinline, used)) int strata_import_test_target(int x) {
  return x * 3 + 1;
}

namespace strata::import {
namespace {

using format::ChunkKind;

constexpr uint32_t kTid = 5;

uint64_t target_address() {
  return reinterpret_cast<uint64_t>(&strata_import_test_target);
}

std::vector<std::byte> events_chunk(format::InstrumentClock clock,
                                    const std::vector<uint64_t>& words, int64_t ref_ns = 0,
                                    uint64_t ref_ticks = 0, int64_t now_ns = 0,
                                    uint64_t now_ticks = 0) {
  namespace off = format::instrument_events_offset;
  std::vector<std::byte> b(format::kInstrumentEventsPrefix + 8 * words.size());
  format::store_le32(b.data() + off::kTid, kTid);
  format::store_le32(b.data() + off::kClock, static_cast<uint32_t>(clock));
  format::store_le64(b.data() + off::kRefNs, static_cast<uint64_t>(ref_ns));
  format::store_le64(b.data() + off::kRefTicks, ref_ticks);
  format::store_le64(b.data() + off::kNowNs, static_cast<uint64_t>(now_ns));
  format::store_le64(b.data() + off::kNowTicks, now_ticks);
  for (size_t i = 0; i < words.size(); ++i) {
    format::store_le64(b.data() + format::kInstrumentEventsPrefix + 8 * i, words[i]);
  }
  return b;
}

uint64_t event(uint64_t address, bool exit, uint64_t delta) {
  return address | (exit ? format::kInstrumentExitBit : 0) |
         (delta << format::kInstrumentDeltaShift);
}

void append_own_maps(format::SpoolWriter& w) {
  std::ifstream in("/proc/self/maps");
  std::stringstream text;
  text << in.rdbuf();
  std::string maps = text.str();
  std::vector<std::byte> b(format::kMemoryMapPrefix + maps.size());
  std::memcpy(b.data() + format::kMemoryMapPrefix, maps.data(), maps.size());
  w.append(ChunkKind::kMemoryMap, b.data(), b.size());
}

class InstrumentProfileTest : public ::testing::Test {
 protected:
  std::string spool_path() const {
    return dir_.file("instrument-" + std::to_string(getpid()) + ".bin");
  }
  test_util::TempDir dir_{"strata-import-test"};
};

TEST_F(InstrumentProfileTest, EventsBecomeCallsOfSymbolizedFunctions) {
  ASSERT_EQ(strata_import_test_target(1), 4);
  {
    auto w = format::SpoolWriter::open(spool_path());
    ASSERT_TRUE(w) << w.error().message;
    w->append_process_info(static_cast<uint32_t>(getpid()), 1, "/bin/prog",
                           std::string("prog\0a\0b\0", 9));
    w->append_thread_name(kTid, "main");
    append_own_maps(*w);
    const uint64_t a = target_address();
    auto chunk = events_chunk(format::InstrumentClock::kMonotonic,
                              {0, 1000, event(a, false, 0), event(a, true, 50)});
    w->append(ChunkKind::kInstrumentEvents, chunk.data(), chunk.size());
    // An event before any clock record in its chunk cannot be timed.
    auto torn = events_chunk(format::InstrumentClock::kMonotonic, {event(a, false, 1)});
    w->append(ChunkKind::kInstrumentEvents, torn.data(), torn.size());
    auto ragged = events_chunk(format::InstrumentClock::kMonotonic, {0, 1});
    w->append(ChunkKind::kInstrumentEvents, ragged.data(), ragged.size() - 4);
    format::DropCounter dropped{static_cast<uint32_t>(format::DropCounterKind::kInstrumentEvents),
                                2};
    w->append_drop_counters({&dropped, 1});
    w->close();
  }
  InstrumentedProfile out = read_instrument_spools({spool_path()});
  EXPECT_EQ(out.counters.spools, 1u);
  EXPECT_EQ(out.counters.unclosed_spools, 0u);
  EXPECT_EQ(out.counters.events, 2u);
  EXPECT_EQ(out.counters.torn_events, 1u);
  EXPECT_EQ(out.counters.malformed_chunks, 1u);
  EXPECT_EQ(out.counters.dropped_events, 2u);
  EXPECT_EQ(out.profile.mode, analysis::ProfileMode::kInstrumented);
  ASSERT_EQ(out.profile.processes.size(), 1u);
  EXPECT_EQ(out.profile.processes[0].command, "prog a b");
  ASSERT_EQ(out.profile.threads.size(), 1u);
  EXPECT_EQ(out.profile.threads[0].name, "main");
  ASSERT_EQ(out.profile.calls.size(), 1u);
  const auto& events = out.profile.calls[0].events;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].time_ns, 1000);
  EXPECT_EQ(events[0].kind, analysis::CallKind::kEnter);
  EXPECT_EQ(events[1].time_ns, 1050);
  EXPECT_EQ(events[1].kind, analysis::CallKind::kExit);
  EXPECT_EQ(events[0].frame, events[1].frame);
  const analysis::Frame& frame = out.profile.frames.at(events[0].frame);
  EXPECT_NE(frame.function.find("strata_import_test_target"), std::string::npos) << frame.function;
  ASSERT_EQ(out.notes.size(), 2u);  // the drops and the malformed chunk
}

// The runtime's calibration calls (format/instrument_payloads.h): one event
// costs the median gap inside the outer call; that much comes off every
// later gap (never below zero), and the calibration events are dropped.
TEST_F(InstrumentProfileTest, CalibrationCostIsTakenOffEveryGapAndItsEventsDropped) {
  {
    auto w = format::SpoolWriter::open(spool_path());
    ASSERT_TRUE(w) << w.error().message;
    append_own_maps(*w);
    const uint64_t outer = format::kInstrumentCalibrationOuter;
    const uint64_t inner = format::kInstrumentCalibrationInner;
    // Gaps of 10 inside the outer call, one of 500 (a preemption the median
    // ignores).
    std::vector<uint64_t> words = {0, 1000, event(outer, false, 0)};
    for (int i = 0; i < 8; ++i) {
      words.push_back(event(inner, false, i == 3 ? 500 : 10));
      words.push_back(event(inner, true, 10));
    }
    words.push_back(event(outer, true, 10));
    const uint64_t a = target_address();
    // The program: a call of 100 between its events, then one of 4 (below
    // the cost: it becomes 0).
    words.push_back(event(a, false, 1000));
    words.push_back(event(a, true, 100));
    words.push_back(event(a, false, 50));
    words.push_back(event(a, true, 4));
    auto chunk = events_chunk(format::InstrumentClock::kMonotonic, words);
    w->append(ChunkKind::kInstrumentEvents, chunk.data(), chunk.size());
    w->close();
  }
  InstrumentedProfile out = read_instrument_spools({spool_path()});
  EXPECT_EQ(out.calibrated_processes, 1u);
  EXPECT_DOUBLE_EQ(out.overhead_ns_per_call, 20.0) << "two events of 10";
  EXPECT_EQ(out.counters.events, 4u) << "the calibration's events are not the program's";
  ASSERT_EQ(out.profile.calls.size(), 1u);
  const auto& e = out.profile.calls[0].events;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[1].time_ns - e[0].time_ns, 90);
  EXPECT_EQ(e[2].time_ns - e[1].time_ns, 40);
  EXPECT_EQ(e[3].time_ns - e[2].time_ns, 0);
}

TEST_F(InstrumentProfileTest, ASpoolWithoutCalibrationIsReadAsItIs) {
  {
    auto w = format::SpoolWriter::open(spool_path());
    ASSERT_TRUE(w) << w.error().message;
    append_own_maps(*w);
    const uint64_t a = target_address();
    auto chunk = events_chunk(format::InstrumentClock::kMonotonic,
                              {0, 1000, event(a, false, 0), event(a, true, 50)});
    w->append(ChunkKind::kInstrumentEvents, chunk.data(), chunk.size());
    w->close();
  }
  InstrumentedProfile out = read_instrument_spools({spool_path()});
  EXPECT_EQ(out.calibrated_processes, 0u);
  EXPECT_EQ(out.uncalibrated_processes, 1u);
  EXPECT_EQ(out.overhead_ns_per_call, 0.0);
  ASSERT_EQ(out.profile.calls.size(), 1u);
  EXPECT_EQ(out.profile.calls[0].events[1].time_ns - out.profile.calls[0].events[0].time_ns, 50);
}

TEST_F(InstrumentProfileTest, TscStampsAreConvertedWithTheChunksPairs) {
  {
    auto w = format::SpoolWriter::open(spool_path());
    ASSERT_TRUE(w);
    const uint64_t a = target_address();
    // 1000 ticks per 1000 ns from (ns 1000, ticks 0): one ns per tick.
    auto chunk =
        events_chunk(format::InstrumentClock::kTsc,
                     {0, 500, event(a, false, 0), event(a, true, 20)}, 1000, 0, 2000, 1000);
    w->append(ChunkKind::kInstrumentEvents, chunk.data(), chunk.size());
    w->abandon();  // as if killed before close: counted, the chunks kept
  }
  InstrumentedProfile out = read_instrument_spools({spool_path()});
  EXPECT_EQ(out.counters.unclosed_spools, 1u);
  ASSERT_EQ(out.profile.calls.size(), 1u);
  ASSERT_EQ(out.profile.calls[0].events.size(), 2u);
  EXPECT_EQ(out.profile.calls[0].events[0].time_ns, 1500);
  EXPECT_EQ(out.profile.calls[0].events[1].time_ns, 1520);
}

TEST_F(InstrumentProfileTest, AFileThatIsNotASpoolIsCountedAndNamed) {
  std::ofstream(spool_path()) << std::string(100, 'x');
  InstrumentedProfile out = read_instrument_spools({spool_path()});
  EXPECT_EQ(out.counters.unreadable_spools, 1u);
  EXPECT_EQ(out.counters.spools, 0u);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_NE(out.notes[0].find(spool_path()), std::string::npos);
  EXPECT_TRUE(out.profile.calls.empty());
}

// Randomized mutation (shared/DESIGN.md: every reader of untrusted bytes):
// whatever the damage, the reader counts it and keeps at most the events the
// intact spool had. The seed is printed; set STRATA_FUZZ_SEED to replay.
TEST_F(InstrumentProfileTest, MutatedSpoolsAreCountedNeverFatal) {
  {
    auto w = format::SpoolWriter::open(spool_path());
    ASSERT_TRUE(w);
    w->append_thread_name(kTid, "main");
    const uint64_t a = target_address();
    auto chunk = events_chunk(
        format::InstrumentClock::kTsc,
        {0, 500, event(a, false, 0), event(a, true, 20), event(a, false, 3), event(a, true, 4)},
        1000, 0, 2000, 1000);
    w->append(ChunkKind::kInstrumentEvents, chunk.data(), chunk.size());
    w->close();
  }
  std::ifstream in(spool_path(), std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  const char* env = std::getenv("STRATA_FUZZ_SEED");
  const uint64_t seed = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  std::printf("seed %llu (STRATA_FUZZ_SEED to replay)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 500; ++i) {
    std::string bytes = original;
    for (int e = 0, n = 1 + static_cast<int>(rng() % 4); e < n; ++e) {
      bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
    }
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    std::ofstream(spool_path(), std::ios::binary | std::ios::trunc) << bytes;
    InstrumentedProfile out = read_instrument_spools({spool_path()});
    ASSERT_LE(out.counters.events, 4u) << "seed " << seed << " iteration " << i;
    ASSERT_EQ(out.counters.spools + out.counters.unreadable_spools, 1u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace strata::import
