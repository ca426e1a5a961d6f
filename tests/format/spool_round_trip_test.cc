// Writer to reader: every chunk kind comes back as written, the header says
// who wrote it and when, and the reader's verdicts on whole files (empty,
// crashed, foreign, newer) are the documented ones.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/clock.h"
#include "format/byte_order.h"
#include "format/crc32.h"
#include "format/payloads.h"
#include "format/spool_reader.h"
#include "format/spool_writer.h"
#include "spool_test_util.h"

namespace strata::format {
namespace {

using testing::ReadChunk;
using testing::TempDir;

std::span<const std::byte> bytes_of(const ReadChunk& chunk) {
  return chunk.payload;
}

TEST(SpoolRoundTrip, EveryKind) {
  TempDir dir;
  std::string path = dir.file("spool-1.bin");
  int64_t before = monotonic_ns();
  testing::write_sample_spool(path, 200);
  int64_t after = monotonic_ns();

  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  const SpoolHeader& h = reader->header();
  EXPECT_EQ(h.major, kFormatMajor);
  EXPECT_EQ(h.minor, kFormatMinor);
  EXPECT_EQ(h.header_size, kFileHeaderSize);
  EXPECT_EQ(h.pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(h.clock_id, static_cast<uint32_t>(ClockId::kMonotonic));
  EXPECT_GE(h.start_clock_ns, before);
  EXPECT_LE(h.start_clock_ns, after);
  EXPECT_GT(h.start_realtime_ns, int64_t{1'600'000'000} * 1'000'000'000);

  auto chunks = testing::read_all(*reader);
  ASSERT_EQ(chunks.size(), 5u);

  ASSERT_EQ(chunks[0].kind, ChunkKind::kProcessInfo);
  auto info = decode_process_info(bytes_of(chunks[0]));
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->pid, 1234u);
  EXPECT_EQ(info->ppid, 1u);
  EXPECT_EQ(info->exe, testing::kSampleExe);
  ASSERT_EQ(info->args.size(), 3u);
  EXPECT_EQ(info->args[0], "python3");
  EXPECT_EQ(info->args[1], "train.py");
  EXPECT_EQ(info->args[2], "--epochs=3");

  ASSERT_EQ(chunks[1].kind, ChunkKind::kThreadName);
  auto thread = decode_thread_name(bytes_of(chunks[1]));
  ASSERT_TRUE(thread.ok()) << thread.error().message;
  EXPECT_EQ(thread->tid, testing::kSampleTid);
  EXPECT_EQ(thread->name, testing::kSampleThreadName);

  ASSERT_EQ(chunks[2].kind, ChunkKind::kStrings);
  auto strings = decode_strings(bytes_of(chunks[2]));
  ASSERT_TRUE(strings.ok()) << strings.error().message;
  ASSERT_EQ(strings->size(), 3u);
  EXPECT_EQ((*strings)[0].id, 1u);
  EXPECT_EQ((*strings)[0].text, "_Z6matmulPfS_S_i");
  EXPECT_EQ((*strings)[1].id, 2u);
  EXPECT_EQ((*strings)[1].text, "cudaLaunchKernel");
  EXPECT_EQ((*strings)[2].id, 3u);
  EXPECT_EQ((*strings)[2].text, "");

  ASSERT_EQ(chunks[3].kind, ChunkKind::kCuptiBuffer);
  auto cupti = decode_cupti_buffer(bytes_of(chunks[3]));
  ASSERT_TRUE(cupti.ok()) << cupti.error().message;
  EXPECT_EQ(cupti->cupti_version, testing::kSampleCuptiVersion);
  ASSERT_EQ(cupti->records.size(), 200u);
  for (size_t i = 0; i < 200; ++i) {
    ASSERT_EQ(cupti->records[i], static_cast<std::byte>(i * 7 + 1)) << i;
  }

  ASSERT_EQ(chunks[4].kind, ChunkKind::kDropCounters);
  auto drops = decode_drop_counters(bytes_of(chunks[4]));
  ASSERT_TRUE(drops.ok()) << drops.error().message;
  ASSERT_EQ(drops->size(), 2u);
  EXPECT_EQ((*drops)[0].kind, static_cast<uint32_t>(DropCounterKind::kCuptiRecords));
  EXPECT_EQ((*drops)[0].total, 17u);
  EXPECT_EQ((*drops)[1].kind, static_cast<uint32_t>(DropCounterKind::kBuffersUnavailable));
  EXPECT_EQ((*drops)[1].total, 2u);

  const SpoolStats& s = reader->stats();
  EXPECT_TRUE(s.intact());
  EXPECT_EQ(s.chunks_ok, 6u);  // the five above and the end marker
  EXPECT_EQ(s.unknown_kinds, 0u);
  EXPECT_TRUE(s.end_seen);
  EXPECT_TRUE(s.clean_end);
  ASSERT_TRUE(s.end.has_value());
  EXPECT_EQ(s.end->chunks_written, 5u);
  EXPECT_EQ(s.end->bytes_written, reader->size() - kChunkHeaderSize - kEndOfStreamSize);
  EXPECT_EQ(s.end->write_errors, 0u);
  EXPECT_EQ(s.end->signal, 0u);
  EXPECT_GE(s.end->end_clock_ns, h.start_clock_ns);
}

TEST(SpoolRoundTrip, PayloadsAreAlignedAndChunksPadded) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  for (size_t len = 0; len < 20; ++len) {
    std::string payload(len, 'x');
    ASSERT_TRUE(writer->append(ChunkKind::kThreadName, payload.data(), payload.size()));
  }
  ASSERT_TRUE(writer->close());
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  Chunk chunk;
  size_t len = 0;
  while (reader->next(&chunk)) {
    EXPECT_EQ(chunk.payload.size(), len++);
    EXPECT_EQ(chunk.offset % kChunkAlignment, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(chunk.payload.data()) % kChunkAlignment, 0u);
  }
  EXPECT_EQ(len, 20u);
  EXPECT_EQ(reader->size() % kChunkAlignment, 0u);
  EXPECT_TRUE(reader->stats().intact());
}

TEST(SpoolRoundTrip, AppendIovConcatenatesParts) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  char a[] = "head-", b[] = "", c[] = "tail";
  iovec parts[] = {{a, 5}, {b, 0}, {c, 4}};
  ASSERT_TRUE(writer->append_iov(ChunkKind::kThreadName, parts, 3));
  iovec too_many[SpoolWriter::kMaxParts + 1] = {};
  EXPECT_FALSE(writer->append_iov(ChunkKind::kThreadName, too_many, SpoolWriter::kMaxParts + 1));
  EXPECT_EQ(writer->stats().rejected, 1u);
  ASSERT_TRUE(writer->close());
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  auto chunks = testing::read_all(*reader);
  ASSERT_EQ(chunks.size(), 1u);
  std::string got(reinterpret_cast<const char*>(chunks[0].payload.data()),
                  chunks[0].payload.size());
  EXPECT_EQ(got, "head-tail");
}

TEST(SpoolRoundTrip, LargeBatchesAreSplit) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  std::vector<std::string> texts;
  for (int i = 0; i < 150; ++i) texts.push_back("kernel_" + std::to_string(i));
  std::vector<StringEntry> entries;
  for (int i = 0; i < 150; ++i) entries.push_back({static_cast<uint64_t>(i) + 100, texts[i]});
  ASSERT_TRUE(writer->append_strings(entries));
  std::vector<DropCounter> drops;
  for (uint32_t i = 0; i < 40; ++i) drops.push_back({i, i * 1000ull});
  ASSERT_TRUE(writer->append_drop_counters(drops));
  ASSERT_TRUE(writer->close());

  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<StringEntry> got_strings;
  std::vector<DropCounter> got_drops;
  Chunk chunk;
  int string_chunks = 0;
  while (reader->next(&chunk)) {
    if (chunk.kind == ChunkKind::kStrings) {
      ++string_chunks;
      auto s = decode_strings(chunk.payload);
      ASSERT_TRUE(s.ok()) << s.error().message;
      got_strings.insert(got_strings.end(), s->begin(), s->end());
    } else if (chunk.kind == ChunkKind::kDropCounters) {
      auto d = decode_drop_counters(chunk.payload);
      ASSERT_TRUE(d.ok()) << d.error().message;
      got_drops.insert(got_drops.end(), d->begin(), d->end());
    }
  }
  EXPECT_EQ(string_chunks, 3);
  ASSERT_EQ(got_strings.size(), 150u);
  for (int i = 0; i < 150; ++i) {
    EXPECT_EQ(got_strings[i].id, static_cast<uint64_t>(i) + 100);
    EXPECT_EQ(got_strings[i].text, texts[i]);
  }
  ASSERT_EQ(got_drops.size(), 40u);
  for (uint32_t i = 0; i < 40; ++i) {
    EXPECT_EQ(got_drops[i].kind, i);
    EXPECT_EQ(got_drops[i].total, i * 1000ull);
  }
}

TEST(SpoolRoundTrip, EmptySpool) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->close());
  EXPECT_FALSE(writer->close());  // idempotent
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_TRUE(testing::read_all(*reader).empty());
  EXPECT_TRUE(reader->stats().intact());
  EXPECT_EQ(reader->stats().end->chunks_written, 0u);
  EXPECT_EQ(reader->stats().end->bytes_written, kFileHeaderSize);
}

TEST(SpoolRoundTrip, MissingEndMarkerReadsAsCrash) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->append_thread_name(1, "main"));
  ASSERT_TRUE(writer->append_thread_name(2, "worker"));
  writer->abandon();
  EXPECT_FALSE(writer->append_thread_name(3, "late"));
  EXPECT_EQ(writer->stats().rejected, 1u);

  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(testing::read_all(*reader).size(), 2u);
  const SpoolStats& s = reader->stats();
  EXPECT_FALSE(s.end_seen);
  EXPECT_FALSE(s.clean_end);
  EXPECT_FALSE(s.intact());
  EXPECT_EQ(s.crc_failures + s.resyncs + s.truncated_bytes, 0u);
}

TEST(SpoolRoundTrip, SignalCloseIsNotClean) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->append_thread_name(1, "main"));
  ASSERT_TRUE(writer->close(11));
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(testing::read_all(*reader).size(), 1u);
  EXPECT_TRUE(reader->stats().end_seen);
  EXPECT_FALSE(reader->stats().clean_end);
  EXPECT_EQ(reader->stats().end->signal, 11u);
}

TEST(SpoolRoundTrip, UnknownKindsAreSkippedAndCounted) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->append_thread_name(1, "a"));
  ASSERT_TRUE(writer->append(static_cast<ChunkKind>(999), "future", 6));
  ASSERT_TRUE(writer->append(static_cast<ChunkKind>(0), "zero", 4));
  ASSERT_TRUE(writer->append_thread_name(2, "b"));
  ASSERT_TRUE(writer->close());
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  auto chunks = testing::read_all(*reader);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(reader->stats().unknown_kinds, 2u);
  EXPECT_EQ(reader->stats().chunks_ok, 5u);
  EXPECT_TRUE(reader->stats().intact());
}

TEST(SpoolRoundTrip, OversizedAppendIsRejected) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  static char big[1];  // never read: the size is refused first
  EXPECT_FALSE(writer->append(ChunkKind::kCuptiBuffer, big, size_t{kMaxChunkPayload} + 1));
  EXPECT_FALSE(writer->append_cupti_buffer(1, big, kMaxChunkPayload));  // + 8-byte prefix
  EXPECT_EQ(writer->stats().rejected, 2u);
  EXPECT_EQ(writer->stats().write_errors, 0u);
  ASSERT_TRUE(writer->close());
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE(testing::read_all(*reader).empty());
  EXPECT_TRUE(reader->stats().intact());
}

TEST(SpoolRoundTrip, WriteErrorsAreCountedNotFatal) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  // /dev/full fails every write with ENOSPC: swap it in under the writer's fd.
  int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full < 0) GTEST_SKIP() << "/dev/full unavailable";
  int spool_fd = writer->fd();
  ASSERT_EQ(::dup2(full, spool_fd), spool_fd);
  ::close(full);
  EXPECT_FALSE(writer->append_thread_name(1, "main"));
  EXPECT_FALSE(writer->append_thread_name(2, "main"));
  EXPECT_EQ(writer->stats().write_errors, 2u);
  EXPECT_EQ(writer->stats().last_errno, ENOSPC);
  EXPECT_FALSE(writer->close());
  EXPECT_EQ(writer->stats().write_errors, 3u);
}

TEST(SpoolRoundTrip, OpenRefusesExistingFile) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  testing::write_file(path, {});
  auto writer = SpoolWriter::open(path);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.error().message, path + ": cannot create spool: File exists");
}

// Header verdicts, on hand-made headers.
std::vector<std::byte> header_bytes(uint16_t major, uint16_t minor, uint32_t header_size) {
  std::vector<std::byte> h(header_size);
  std::memcpy(h.data(), kSpoolMagic, 8);
  store_le16(h.data() + header_offset::kMajor, major);
  store_le16(h.data() + header_offset::kMinor, minor);
  store_le32(h.data() + header_offset::kHeaderSize, header_size);
  store_le32(h.data() + header_offset::kPid, 77);
  store_le32(h.data() + header_offset::kClockId, 1);
  store_le32(h.data() + header_size - 4, crc32(h.data(), header_size - 4));
  return h;
}

void append_chunk(std::vector<std::byte>& file, uint32_t kind, const std::string& payload) {
  std::vector<std::byte> c(kChunkHeaderSize + align_chunk(payload.size()));
  store_le32(c.data(), kChunkMarker);
  store_le32(c.data() + 4, kind);
  store_le32(c.data() + 8, static_cast<uint32_t>(payload.size()));
  std::memcpy(c.data() + kChunkHeaderSize, payload.data(), payload.size());
  uint32_t crc = crc32_update(0, c.data() + 4, 8);
  store_le32(c.data() + 12, crc32_update(crc, payload.data(), payload.size()));
  file.insert(file.end(), c.begin(), c.end());
}

std::string open_error(std::vector<std::byte> bytes) {
  auto reader = SpoolReader::from_bytes(std::move(bytes), "run/spool-123.bin");
  return reader.ok() ? "(opened)" : reader.error().message;
}

TEST(SpoolHeader, Verdicts) {
  EXPECT_EQ(open_error({}),
            "run/spool-123.bin: empty spool (the process ended before writing the header)");
  std::vector<std::byte> elf(64);
  std::memcpy(elf.data(),
              "\x7f"
              "ELF",
              4);
  EXPECT_EQ(open_error(elf), "run/spool-123.bin: not a strata spool (bad magic)");
  EXPECT_EQ(open_error(header_bytes(3, 1, 48)),
            "run/spool-123.bin: spool format 3.x is newer than this strata reads (1.x)");
  EXPECT_EQ(open_error(header_bytes(0, 9, 48)),
            "run/spool-123.bin: spool format 0.x is older than this strata reads (1.x)");
  auto good = header_bytes(1, 0, 48);
  EXPECT_EQ(open_error(good), "(opened)");
  EXPECT_EQ(open_error({good.begin(), good.begin() + 5}),
            "run/spool-123.bin: truncated spool header (5 of 48 bytes)");
  EXPECT_EQ(open_error({good.begin(), good.begin() + 47}),
            "run/spool-123.bin: truncated spool header (47 of 48 bytes)");
  auto flipped = good;
  flipped[header_offset::kPid] ^= std::byte{1};
  EXPECT_EQ(open_error(flipped), "run/spool-123.bin: corrupt spool header (checksum mismatch)");
  EXPECT_EQ(open_error(header_bytes(1, 0, 56)),
            "run/spool-123.bin: corrupt spool header (header size 56)");
  EXPECT_EQ(open_error(header_bytes(1, 5, 1 << 20)),
            "run/spool-123.bin: corrupt spool header (header size 1048576)");
}

TEST(SpoolHeader, MissingFileNamesIt) {
  auto reader = SpoolReader::open("/nonexistent/spool-9.bin");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.error().message,
            "/nonexistent/spool-9.bin: cannot open spool: No such file or directory");
}

TEST(SpoolHeader, NewerMinorIsRead) {
  // 1.7: a longer header and a chunk kind from the future around known ones.
  auto file = header_bytes(1, 7, 64);
  append_chunk(file, static_cast<uint32_t>(ChunkKind::kThreadName),
               std::string("\x05\0\0\0\0\0\0\0w", 9));
  append_chunk(file, 4000, "new kind");
  append_chunk(file, static_cast<uint32_t>(ChunkKind::kThreadName),
               std::string("\x06\0\0\0\0\0\0\0v", 9));
  auto reader = SpoolReader::from_bytes(file, "spool.bin");
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->header().minor, 7u);
  EXPECT_EQ(reader->header().header_size, 64u);
  EXPECT_EQ(reader->header().pid, 77u);
  auto chunks = testing::read_all(*reader);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(decode_thread_name(chunks[1].payload)->tid, 6u);
  EXPECT_EQ(reader->stats().unknown_kinds, 1u);
  EXPECT_EQ(reader->stats().crc_failures, 0u);
}

TEST(Payloads, MalformedAreRefused) {
  auto bytes = [](const std::string& s) {
    return std::vector<std::byte>(reinterpret_cast<const std::byte*>(s.data()),
                                  reinterpret_cast<const std::byte*>(s.data()) + s.size());
  };
  auto strings =
      bytes(std::string("\x01\0\0\0\0\0\0\0"
                        "\x01\0\0\0\0\0\0\0\xff\0\0\0",
                        20));
  auto s = decode_strings(strings);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "malformed strings chunk: entry 0 overruns the payload");
  auto huge_count = bytes(std::string("\xff\xff\xff\xff\0\0\0\0", 8));
  EXPECT_FALSE(decode_strings(huge_count).ok());
  EXPECT_FALSE(decode_drop_counters(huge_count).ok());
  EXPECT_FALSE(decode_thread_name(bytes("abc")).ok());
  EXPECT_FALSE(decode_cupti_buffer(bytes("abc")).ok());
  EXPECT_FALSE(decode_end_of_stream(bytes(std::string(41, '\0'))).ok());
  auto info = bytes(std::string("\1\0\0\0\2\0\0\0\xff\xff\xff\xff\x01\0\0\0", 16) + "x");
  EXPECT_FALSE(decode_process_info(info).ok());
  auto no_nul = bytes(std::string("\1\0\0\0\2\0\0\0\0\0\0\0\x02\0\0\0", 16) + "ab");
  auto p = decode_process_info(no_nul);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "malformed process-info chunk: command line does not end in NUL");
}

// Resident memory of this process, from /proc/self/status (kB).
long resident_kb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb;
}

// A reader that kept every page it passed would hold the whole spool (~250
// MB for a million launches); it drops them in 8 MiB steps, and views handed
// out earlier still read the file's bytes.
TEST(SpoolRoundTrip, PassedPagesLeaveMemoryAndEarlierViewsStayValid) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  {
    auto writer = SpoolWriter::open(path);
    ASSERT_TRUE(writer.ok());
    std::vector<std::byte> buffer(1 << 20);
    for (int i = 0; i < 64; ++i) {
      std::memset(buffer.data(), i + 1, buffer.size());
      ASSERT_TRUE(writer->append_cupti_buffer(130001, buffer.data(), buffer.size()));
    }
    ASSERT_TRUE(writer->close());
  }
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  const long before = resident_kb();
  ASSERT_GT(before, 0);
  Chunk chunk;
  std::span<const std::byte> first;
  uint64_t sum = 0;
  int buffers = 0;
  while (reader->next(&chunk)) {
    if (chunk.kind != ChunkKind::kCuptiBuffer) continue;
    auto b = decode_cupti_buffer(chunk.payload);
    ASSERT_TRUE(b.ok());
    if (buffers++ == 0) first = b->records;
    for (size_t i = 0; i < b->records.size(); i += 4096) sum += static_cast<uint8_t>(b->records[i]);
  }
  const long after = resident_kb();
  EXPECT_EQ(buffers, 64);
  EXPECT_EQ(sum, 256u * (64 * 65 / 2));  // every page was read: 256 pages of each value
  // 64 MiB passed; at most about two release steps may stay resident.
  EXPECT_LT(after - before, 24 * 1024) << "before " << before << " kB, after " << after << " kB";
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(static_cast<uint8_t>(first[0]), 1);
  EXPECT_EQ(static_cast<uint8_t>(first[first.size() - 1]), 1);
}

// A caller that reads the file once and walks the payloads afterwards
// (ingest) brings each back into memory; release() drops it again.
TEST(SpoolRoundTrip, ReleasedPayloadsLeaveMemory) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  {
    auto writer = SpoolWriter::open(path);
    ASSERT_TRUE(writer.ok());
    std::vector<std::byte> buffer(1 << 20, std::byte{7});
    for (int i = 0; i < 64; ++i) {
      ASSERT_TRUE(writer->append_cupti_buffer(130001, buffer.data(), buffer.size()));
    }
    ASSERT_TRUE(writer->close());
  }
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<std::span<const std::byte>> payloads;
  Chunk chunk;
  while (reader->next(&chunk)) {
    if (chunk.kind == ChunkKind::kCuptiBuffer) payloads.push_back(chunk.payload);
  }
  ASSERT_EQ(payloads.size(), 64u);
  const long before = resident_kb();
  uint64_t sum = 0;
  for (auto p : payloads) {
    for (size_t i = 0; i < p.size(); i += 4096) sum += static_cast<uint8_t>(p[i]);
    reader->release(p);
  }
  const long after = resident_kb();
  EXPECT_GT(sum, 64u * 250 * 7);  // the walk read every page
  EXPECT_LT(after - before, 8 * 1024) << "before " << before << " kB, after " << after << " kB";
  // Released pages read back from the file.
  EXPECT_EQ(static_cast<uint8_t>(payloads[0][100]), 7);
}

}  // namespace
}  // namespace strata::format
