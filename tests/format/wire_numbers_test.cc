// Every number on the spool's wire has one owner (src/format) and one table
// of names: no two chunk kinds, drop counters, clocks or sampler counter
// slots may share a number or a name (issue 17: kinds 7 and 8 once meant two
// things). The tables are also static_asserted; this test names the culprit.
#include <gtest/gtest.h>

#include <set>
#include <span>
#include <string>

#include "format/instrument_payloads.h"
#include "format/payloads.h"
#include "format/sampler_payloads.h"
#include "format/spool_format.h"

namespace strata::format {
namespace {

void expect_unique(const char* table_name, std::span<const WireName> table) {
  std::set<uint32_t> values;
  std::set<std::string> names;
  for (const WireName& entry : table) {
    EXPECT_TRUE(values.insert(entry.value).second)
        << table_name << ": " << entry.value << " is used twice (again by " << entry.name << ")";
    EXPECT_TRUE(names.insert(entry.name).second)
        << table_name << ": the name " << entry.name << " is used twice";
  }
}

TEST(WireNumbersTest, EveryTableHasUniqueNumbersAndNames) {
  expect_unique("chunk kinds", kChunkKindNames);
  expect_unique("drop counters", kDropCounterNames);
  expect_unique("clock ids", kClockIdNames);
  expect_unique("instrument clocks", kInstrumentClockNames);
  expect_unique("sampler counters", kSamplerCounterNames);
}

TEST(WireNumbersTest, UniquenessCheckCatchesACollision) {
  const WireName same_number[] = {{7, "kernel-metrics"}, {7, "instrument-events"}};
  const WireName same_name[] = {{7, "memory-map"}, {8, "memory-map"}};
  const WireName fine[] = {{7, "kernel-metrics"}, {8, "kernels-seen"}};
  EXPECT_FALSE(wire_names_unique(same_number));
  EXPECT_FALSE(wire_names_unique(same_name));
  EXPECT_TRUE(wire_names_unique(fine));
}

TEST(WireNumbersTest, EveryKnownKindIsNamedAndEveryNamedKindIsKnown) {
  for (uint32_t kind = 1; kind <= kLastKnownKind; ++kind) {
    EXPECT_TRUE(is_known_kind(kind));
    EXPECT_STRNE(chunk_kind_name(kind), "unknown") << kind;
  }
  for (const WireName& entry : kChunkKindNames) EXPECT_TRUE(is_known_kind(entry.value));
  EXPECT_FALSE(is_known_kind(0));
  EXPECT_FALSE(is_known_kind(kLastKnownKind + 1));
  EXPECT_STREQ(chunk_kind_name(kLastKnownKind + 1), "unknown");
}

// The numbers that are shipped (docs/spool-format.md) never move.
TEST(WireNumbersTest, ShippedNumbersKeepTheirMeaning) {
  EXPECT_STREQ(chunk_kind_name(1), "cupti-buffer");
  EXPECT_STREQ(chunk_kind_name(6), "end-of-stream");
  EXPECT_STREQ(chunk_kind_name(7), "kernel-metrics");
  EXPECT_STREQ(chunk_kind_name(8), "kernels-seen");
  EXPECT_STREQ(chunk_kind_name(9), "instrument-events");
  EXPECT_STREQ(chunk_kind_name(10), "memory-map");
  EXPECT_STREQ(chunk_kind_name(11), "sampler-samples");
  EXPECT_STREQ(chunk_kind_name(12), "sampler-counters");
  EXPECT_STREQ(chunk_kind_name(13), "torch-ops");
  EXPECT_STREQ(chunk_kind_name(14), "torch-status");
  EXPECT_STREQ(drop_counter_name(5), "instrument-events");
  EXPECT_EQ(kFormatMajor, 1);
  EXPECT_EQ(kFormatMinor, 4);
  // 1.4 gave addresses 1 and 2 of instrument-events to the runtime's calibration.
  EXPECT_EQ(kInstrumentCalibrationOuter, 1u);
  EXPECT_EQ(kInstrumentCalibrationInner, 2u);
}

}  // namespace
}  // namespace strata::format
