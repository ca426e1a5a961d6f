// Damaged spools: flipped payload bytes, broken lengths and markers, a cut at
// every byte offset, and seeded random mutations. The reader must keep every
// chunk the damage did not touch, count what it lost, and never read out of
// bounds (run under ASan or valgrind: see docs/spool-format.md).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "format/byte_order.h"
#include "format/spool_reader.h"
#include "spool_test_util.h"

namespace strata::format {
namespace {

using testing::ReadChunk;
using testing::TempDir;

// The sample spool and its chunks as read intact.
struct Sample {
  std::vector<std::byte> bytes;
  std::vector<ReadChunk> chunks;
};

Sample make_sample(size_t cupti_records = 200) {
  TempDir dir;
  Sample s;
  s.bytes = testing::write_sample_spool(dir.file("spool.bin"), cupti_records);
  auto reader = SpoolReader::from_bytes(s.bytes, "sample");
  EXPECT_TRUE(reader.ok());
  s.chunks = testing::read_all(*reader);
  EXPECT_EQ(s.chunks.size(), 5u);
  return s;
}

struct ReadResult {
  std::vector<ReadChunk> chunks;
  SpoolStats stats;
};

ReadResult read_bytes(std::vector<std::byte> bytes) {
  auto reader = SpoolReader::from_bytes(std::move(bytes), "mutant");
  EXPECT_TRUE(reader.ok()) << reader.error().message;
  if (!reader.ok()) return {};
  ReadResult r;
  r.chunks = testing::read_all(*reader);
  r.stats = reader->stats();
  return r;
}

std::vector<ReadChunk> without(const std::vector<ReadChunk>& chunks, size_t index) {
  std::vector<ReadChunk> out = chunks;
  out.erase(out.begin() + static_cast<ptrdiff_t>(index));
  return out;
}

TEST(SpoolDamage, CorruptPayloadByteSkipsOnlyThatChunk) {
  Sample s = make_sample();
  for (size_t victim = 0; victim < s.chunks.size(); ++victim) {
    SCOPED_TRACE("chunk " + std::to_string(victim));
    auto bytes = s.bytes;
    size_t at = s.chunks[victim].offset + kChunkHeaderSize + s.chunks[victim].payload.size() / 2;
    bytes[at] ^= std::byte{0x40};
    ReadResult r = read_bytes(bytes);
    EXPECT_EQ(r.chunks, without(s.chunks, victim));
    EXPECT_EQ(r.stats.crc_failures, 1u);
    EXPECT_EQ(r.stats.resyncs, 1u);
    EXPECT_EQ(r.stats.truncated_bytes, 0u);
    EXPECT_TRUE(r.stats.clean_end);
    EXPECT_FALSE(r.stats.intact());
  }
}

TEST(SpoolDamage, CorruptCrcFieldSkipsOnlyThatChunk) {
  Sample s = make_sample();
  auto bytes = s.bytes;
  bytes[s.chunks[2].offset + 12] ^= std::byte{1};
  ReadResult r = read_bytes(bytes);
  EXPECT_EQ(r.chunks, without(s.chunks, 2));
  EXPECT_EQ(r.stats.crc_failures, 1u);
}

TEST(SpoolDamage, CorruptLengthResyncsToNextChunk) {
  Sample s = make_sample();
  // Larger than the file, smaller than the payload, and absurd: each time the
  // next chunk must be found by scanning.
  for (uint32_t length : {uint32_t{5000000}, uint32_t{3}, uint32_t{0xFFFFFFF0}}) {
    for (size_t victim = 0; victim < s.chunks.size(); ++victim) {
      SCOPED_TRACE("length " + std::to_string(length) + " chunk " + std::to_string(victim));
      auto bytes = s.bytes;
      store_le32(bytes.data() + s.chunks[victim].offset + 8, length);
      ReadResult r = read_bytes(bytes);
      EXPECT_EQ(r.chunks, without(s.chunks, victim));
      EXPECT_EQ(r.stats.crc_failures, 1u);
      EXPECT_EQ(r.stats.resyncs, 1u);
      EXPECT_EQ(r.stats.skipped_bytes, s.chunks[victim].offset + kChunkHeaderSize +
                                           align_chunk(s.chunks[victim].payload.size()) -
                                           s.chunks[victim].offset);
      EXPECT_TRUE(r.stats.clean_end);
    }
  }
}

TEST(SpoolDamage, CorruptMarkerResyncs) {
  Sample s = make_sample();
  auto bytes = s.bytes;
  bytes[s.chunks[1].offset] = std::byte{0};
  ReadResult r = read_bytes(bytes);
  EXPECT_EQ(r.chunks, without(s.chunks, 1));
  EXPECT_EQ(r.stats.crc_failures, 0u);
  EXPECT_EQ(r.stats.resyncs, 1u);
  EXPECT_TRUE(r.stats.clean_end);
}

TEST(SpoolDamage, GarbageBetweenChunksIsSkipped) {
  // What a failed short write followed by more appends leaves.
  Sample s = make_sample();
  auto bytes = s.bytes;
  std::vector<std::byte> garbage(13, std::byte{0xD3});
  bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(s.chunks[3].offset), garbage.begin(),
               garbage.end());
  ReadResult r = read_bytes(bytes);
  ASSERT_EQ(r.chunks.size(), s.chunks.size());
  for (size_t i = 0; i < r.chunks.size(); ++i) {
    EXPECT_EQ(r.chunks[i].kind, s.chunks[i].kind);
    EXPECT_EQ(r.chunks[i].payload, s.chunks[i].payload);  // copied back into alignment
  }
  EXPECT_EQ(r.stats.resyncs, 1u);
  EXPECT_EQ(r.stats.skipped_bytes, 13u);
  EXPECT_EQ(r.stats.crc_failures, 0u);
}

TEST(SpoolDamage, TruncatedAtEveryOffset) {
  Sample s = make_sample(40);
  // Every frame in the file: the data chunks, then the end marker.
  struct Frame {
    uint64_t offset, length;
  };
  std::vector<Frame> frames;
  for (const ReadChunk& c : s.chunks) frames.push_back({c.offset, c.payload.size()});
  frames.push_back({s.bytes.size() - kChunkHeaderSize - kEndOfStreamSize, kEndOfStreamSize});

  for (size_t cut = kFileHeaderSize; cut <= s.bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    ReadResult r = read_bytes({s.bytes.begin(), s.bytes.begin() + static_cast<ptrdiff_t>(cut)});
    // A chunk survives when its header and payload lie before the cut; one
    // the cut goes through is truncated from its start, unless only its
    // padding is gone.
    std::vector<ReadChunk> expected;
    uint64_t truncated = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
      uint64_t payload_end = frames[i].offset + kChunkHeaderSize + frames[i].length;
      if (payload_end <= cut) {
        if (i < s.chunks.size()) expected.push_back(s.chunks[i]);
      } else if (frames[i].offset < cut) {
        truncated = cut - frames[i].offset;
      }
    }
    EXPECT_EQ(r.chunks, expected);
    EXPECT_EQ(r.stats.truncated_bytes, truncated);
    EXPECT_EQ(r.stats.crc_failures, 0u);
    EXPECT_EQ(r.stats.resyncs, 0u);
    EXPECT_EQ(r.stats.skipped_bytes, 0u);
    EXPECT_EQ(r.stats.end_seen, cut == s.bytes.size());
    EXPECT_EQ(r.stats.intact(), cut == s.bytes.size());
  }
}

std::vector<std::byte> mutate(const std::vector<std::byte>& original, std::mt19937_64& rng) {
  std::vector<std::byte> bytes = original;
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  // Mostly chunk data; one in ten reaches into the file header, where the
  // verdict may be an error instead of a read.
  size_t base = pick(10) == 0 ? 0 : kFileHeaderSize;
  size_t span = bytes.size() - base;
  switch (pick(5)) {
    case 0: {  // a few flipped bits
      int flips = 1 + static_cast<int>(pick(8));
      for (int i = 0; i < flips; ++i) bytes[base + pick(span)] ^= std::byte(1u << pick(8));
      break;
    }
    case 1: {  // a run of random bytes
      size_t at = base + pick(span);
      size_t len = std::min(bytes.size() - at, 1 + pick(64));
      for (size_t i = 0; i < len; ++i) bytes[at + i] = std::byte(pick(256));
      break;
    }
    case 2: {  // a random 32-bit value over a header field
      size_t at = base + pick(span - 3);
      store_le32(bytes.data() + at, static_cast<uint32_t>(rng()));
      break;
    }
    case 3: {  // bytes inserted or removed: framing shifts
      size_t at = base + pick(span);
      if (pick(2) == 0) {
        bytes.erase(
            bytes.begin() + static_cast<ptrdiff_t>(at),
            bytes.begin() + static_cast<ptrdiff_t>(std::min(bytes.size(), at + 1 + pick(20))));
      } else {
        std::vector<std::byte> extra(1 + pick(20));
        for (auto& b : extra) b = std::byte(pick(256));
        bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(at), extra.begin(), extra.end());
      }
      break;
    }
    default:  // truncation, then maybe a flip
      bytes.resize(base + pick(span));
      if (bytes.size() > base && pick(2) == 0)
        bytes[base + pick(bytes.size() - base)] ^= std::byte{0x80};
      break;
  }
  return bytes;
}

TEST(SpoolDamage, RandomMutations) {
  constexpr int kMutations = 500;
  uint64_t seed = 20260101;
  if (const char* env = std::getenv("STRATA_MUTATION_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::printf("mutation seed %llu (set STRATA_MUTATION_SEED to reproduce)\n",
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  Sample s = make_sample(300);
  // Every chunk the reader gives must be one of the originals: a damaged
  // chunk is never passed off as data.
  auto is_original = [&](const ReadChunk& c) {
    for (const ReadChunk& o : s.chunks) {
      if (o.kind == c.kind && o.payload == c.payload) return true;
    }
    return false;
  };
  int refused = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int i = 0; i < kMutations && std::chrono::steady_clock::now() < deadline; ++i) {
    SCOPED_TRACE("mutation " + std::to_string(i) + " seed " + std::to_string(seed));
    std::vector<std::byte> bytes = mutate(s.bytes, rng);
    size_t size = bytes.size();
    auto reader = SpoolReader::from_bytes(std::move(bytes), "mutant");
    if (!reader.ok()) {
      ++refused;
      EXPECT_EQ(reader.error().message.rfind("mutant: ", 0), 0u) << reader.error().message;
      continue;
    }
    ReadResult r;
    r.chunks = testing::read_all(*reader);
    r.stats = reader->stats();
    for (const ReadChunk& c : r.chunks) EXPECT_TRUE(is_original(c)) << "chunk at " << c.offset;
    EXPECT_LE(r.chunks.size(), s.chunks.size());
    const SpoolStats& st = r.stats;
    EXPECT_LE(st.skipped_bytes + st.truncated_bytes + kFileHeaderSize, size);
    EXPECT_LE(st.chunks_ok, s.chunks.size() + 1);
    EXPECT_LE(st.resyncs, size);
    if (st.intact()) {
      EXPECT_EQ(r.chunks.size(), s.chunks.size());
    }
  }
  std::printf("%d mutants refused at the header\n", refused);
}

}  // namespace
}  // namespace strata::format

namespace strata::format {
namespace {

// Spools sit in a directory the target can write to: a symlink or a FIFO
// planted under a spool's name is refused with one line, not followed or
// waited on.
TEST(SpoolOpen, RefusesSymlinksAndFifos) {
  testing::TempDir dir;
  testing::write_sample_spool(dir.file("real.bin"), 10);
  ASSERT_TRUE(SpoolReader::open(dir.file("real.bin")).ok());
  ASSERT_EQ(symlink(dir.file("real.bin").c_str(), dir.file("link.bin").c_str()), 0);
  auto through_link = SpoolReader::open(dir.file("link.bin"));
  ASSERT_FALSE(through_link.ok());
  EXPECT_NE(through_link.error().message.find("link.bin"), std::string::npos);
  ASSERT_EQ(mkfifo(dir.file("fifo.bin").c_str(), 0600), 0);
  auto fifo = SpoolReader::open(dir.file("fifo.bin"));
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace strata::format
