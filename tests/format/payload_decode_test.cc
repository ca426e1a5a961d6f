// The chunks of 1.2 that strata::instrument writes (instrument-events,
// memory-map), decoded from bytes laid out by hand as the producer lays them.
#include <gtest/gtest.h>

#include <vector>

#include "format/byte_order.h"
#include "format/instrument_payloads.h"
#include "format/payloads.h"

namespace strata::format {
namespace {

std::vector<std::byte> events_payload(uint32_t clock, size_t words) {
  std::vector<std::byte> b(kInstrumentEventsPrefix + words * kInstrumentWordSize);
  namespace off = instrument_events_offset;
  store_le32(b.data() + off::kTid, 77);
  store_le32(b.data() + off::kClock, clock);
  store_le64(b.data() + off::kRefNs, 1000);
  store_le64(b.data() + off::kRefTicks, 2000);
  store_le64(b.data() + off::kNowNs, 3000);
  store_le64(b.data() + off::kNowTicks, 4000);
  for (size_t i = 0; i < words; ++i) {
    store_le64(b.data() + kInstrumentEventsPrefix + i * kInstrumentWordSize, i + 1);
  }
  return b;
}

TEST(PayloadDecodeTest, InstrumentEvents) {
  auto b = events_payload(static_cast<uint32_t>(InstrumentClock::kTsc), 3);
  auto e = decode_instrument_events(b);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->tid, 77u);
  EXPECT_EQ(e->clock, InstrumentClock::kTsc);
  EXPECT_EQ(e->ref_ns, 1000);
  EXPECT_EQ(e->ref_ticks, 2000u);
  EXPECT_EQ(e->now_ns, 3000);
  EXPECT_EQ(e->now_ticks, 4000u);
  ASSERT_EQ(e->word_count(), 3u);
  EXPECT_EQ(load_le64(e->words.data() + 2 * kInstrumentWordSize), 3u);
}

TEST(PayloadDecodeTest, InstrumentEventsStrict) {
  auto ragged = events_payload(1, 2);
  ragged.pop_back();
  EXPECT_FALSE(decode_instrument_events(ragged));
  EXPECT_FALSE(decode_instrument_events(std::vector<std::byte>(kInstrumentEventsPrefix - 8)));
  auto bad_clock = decode_instrument_events(events_payload(3, 1));
  ASSERT_FALSE(bad_clock);
  EXPECT_NE(bad_clock.error().message.find("unknown clock 3"), std::string::npos);
  EXPECT_TRUE(decode_instrument_events(events_payload(1, 0)));
}

TEST(PayloadDecodeTest, MemoryMap) {
  std::string text = "00400000-00401000 r-xp 00000000 08:01 12 /bin/prog\n";
  std::vector<std::byte> b(kMemoryMapPrefix + text.size());
  store_le64(b.data(), 123456789);
  std::memcpy(b.data() + kMemoryMapPrefix, text.data(), text.size());
  auto m = decode_memory_map(b);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->time_ns, 123456789);
  EXPECT_EQ(m->text, text);
  EXPECT_FALSE(decode_memory_map(std::vector<std::byte>(kMemoryMapPrefix - 1)));
}

}  // namespace
}  // namespace strata::format
