// CRC-32 against published check values and against the bit-at-a-time
// definition for every length and alignment the slicing loop distinguishes.
#include "format/crc32.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace strata::format {
namespace {

uint32_t crc_of(const std::string& s) {
  return crc32(s.data(), s.size());
}

TEST(Crc32, KnownVectors) {
  EXPECT_EQ(crc_of(""), 0x00000000u);
  EXPECT_EQ(crc_of("a"), 0xE8B7BE43u);
  EXPECT_EQ(crc_of("abc"), 0x352441C2u);
  EXPECT_EQ(crc_of("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc_of("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc_of(zeros), 0x190A55ADu);
  std::string ones(32, '\xFF');
  EXPECT_EQ(crc_of(ones), 0xFF6CAB0Bu);
}

TEST(Crc32, MatchesBitwiseForAllLengthsAndAlignments) {
  std::mt19937 rng(12345);
  std::vector<unsigned char> data(300 + 16);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t len = 0; len <= 300; ++len) {
      ASSERT_EQ(crc32(data.data() + offset, len), crc32_bitwise(data.data() + offset, len))
          << "offset " << offset << " length " << len;
    }
  }
}

TEST(Crc32, UpdateIsConcatenation) {
  std::string text = "strata spool chunk payloads are checksummed in pieces by writev";
  uint32_t whole = crc_of(text);
  for (size_t split = 0; split <= text.size(); ++split) {
    uint32_t crc = crc32_update(0, text.data(), split);
    crc = crc32_update(crc, text.data() + split, text.size() - split);
    ASSERT_EQ(crc, whole) << "split at " << split;
  }
}

}  // namespace
}  // namespace strata::format
