// The kernel chunks of format 1.1 (kernel-metrics, kernels-seen): round trips
// through writer and reader, the writer's limits and allocation freedom, and
// the decoders' verdict on every truncation and every single-bit flip of a
// payload (an error or a consistent value, never a read out of bounds: run
// under ASan to make the latter loud), plus reader mutations of a spool that
// holds them.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "format/payloads.h"
#include "format/spool_reader.h"
#include "format/spool_writer.h"
#include "spool_test_util.h"

namespace strata::format {
namespace {

using testing::ReadChunk;
using testing::TempDir;

// Name lengths 0..9 and an odd one so every padding length is exercised.
const std::string kKernel = "_Z4gemmILi32EEvPKfS1_Pfi";
const MetricValue kMetrics[] = {
    {"gpu__time_duration.sum", 7776.0},
    {"gpc__cycles_elapsed.max", 15368.0},
    {"sm__cycles_active.avg", 1462.6666666},
    {"l", -0.0},
    {"", 1e300},
    {"launch__block_size", 64.0},
    {"launch__grid_size", 16.0},
    {"device__attribute_multiprocessor_count", 132.0},
};
const KernelMetricsHeader kHeader = {0, 0, 77, 3, 1'000'000'000, 1'000'050'000};

struct SpoolWithKernels {
  std::vector<std::byte> bytes;
  std::vector<ReadChunk> chunks;
};

SpoolWithKernels write_kernel_spool() {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  EXPECT_TRUE(writer.ok());
  KernelMetricsHeader failed = kHeader;
  failed.status = 35;  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
  failed.invocation = 4;
  KernelSeen seen[] = {{12, kKernel}, {1, "_Z5emptyv"}, {0, ""}};
  EXPECT_TRUE(writer->append_thread_name(1, "main"));
  EXPECT_TRUE(writer->append_kernel_metrics(kHeader, kKernel, kMetrics));
  EXPECT_TRUE(writer->append_kernel_metrics(failed, kKernel, {}));
  EXPECT_TRUE(writer->append_kernels_seen(seen));
  EXPECT_TRUE(writer->close());
  SpoolWithKernels s;
  s.bytes = testing::read_file(path);
  auto reader = SpoolReader::from_bytes(s.bytes, "kernels");
  EXPECT_TRUE(reader.ok());
  s.chunks = testing::read_all(*reader);
  EXPECT_EQ(s.chunks.size(), 4u);
  return s;
}

TEST(KernelChunks, RoundTrip) {
  SpoolWithKernels s = write_kernel_spool();
  ASSERT_EQ(s.chunks.size(), 4u);
  ASSERT_EQ(s.chunks[1].kind, ChunkKind::kKernelMetrics);
  EXPECT_EQ(s.chunks[1].payload.size() % 8, 0u);
  auto km = decode_kernel_metrics(s.chunks[1].payload);
  ASSERT_TRUE(km.ok()) << km.error().message;
  EXPECT_EQ(km->header.device, kHeader.device);
  EXPECT_EQ(km->header.status, 0u);
  EXPECT_EQ(km->header.correlation_id, 77u);
  EXPECT_EQ(km->header.invocation, 3u);
  EXPECT_EQ(km->header.start_ns, kHeader.start_ns);
  EXPECT_EQ(km->header.end_ns, kHeader.end_ns);
  EXPECT_EQ(km->kernel_name, kKernel);
  ASSERT_EQ(km->metrics.size(), std::size(kMetrics));
  for (size_t i = 0; i < std::size(kMetrics); ++i) {
    EXPECT_EQ(km->metrics[i].name, kMetrics[i].name) << i;
    // Bit-exact, the sign of -0.0 included.
    EXPECT_EQ(std::bit_cast<uint64_t>(km->metrics[i].value),
              std::bit_cast<uint64_t>(kMetrics[i].value))
        << i;
  }

  auto failed = decode_kernel_metrics(s.chunks[2].payload);
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_EQ(failed->header.status, 35u);
  EXPECT_EQ(failed->header.invocation, 4u);
  EXPECT_TRUE(failed->metrics.empty());

  ASSERT_EQ(s.chunks[3].kind, ChunkKind::kKernelsSeen);
  auto seen = decode_kernels_seen(s.chunks[3].payload);
  ASSERT_TRUE(seen.ok()) << seen.error().message;
  ASSERT_EQ(seen->size(), 3u);
  EXPECT_EQ((*seen)[0].name, kKernel);
  EXPECT_EQ((*seen)[0].launches, 12u);
  EXPECT_EQ((*seen)[1].name, "_Z5emptyv");
  EXPECT_EQ((*seen)[2].name, "");
  EXPECT_EQ(chunk_kind_name(7), std::string("kernel-metrics"));
  EXPECT_EQ(chunk_kind_name(8), std::string("kernels-seen"));
}

TEST(KernelChunks, AppendersDoNotAllocate) {
  TempDir dir;
  auto writer = SpoolWriter::open(dir.file("spool.bin"));
  ASSERT_TRUE(writer.ok());
  std::vector<KernelSeen> seen(300, KernelSeen{5, "_Z1kv"});
  testing::count_allocations(true);
  bool a = writer->append_kernel_metrics(kHeader, kKernel, kMetrics);
  bool b = writer->append_kernels_seen(seen);
  int allocations = testing::count_allocations(false);
  EXPECT_TRUE(a);
  EXPECT_TRUE(b);
  EXPECT_EQ(allocations, 0);
}

TEST(KernelChunks, KernelsSeenSplitsByCountAndSize) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back("_Z6kernelILi" + std::to_string(i) + "EEvv");
  std::string big(40'000, 'x');   // two of these cannot share a chunk
  std::string huge(70'000, 'y');  // cannot fit in any chunk: refused alone
  std::vector<KernelSeen> seen;
  for (size_t i = 0; i < names.size(); ++i) seen.push_back({i + 1, names[i]});
  seen.push_back({1, big});
  seen.push_back({2, huge});
  seen.push_back({3, big});
  EXPECT_FALSE(writer->append_kernels_seen(seen));  // the huge one was refused
  EXPECT_EQ(writer->stats().rejected, 1u);
  ASSERT_TRUE(writer->close());

  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<KernelSeen> back;
  std::vector<ReadChunk> chunks = testing::read_all(*reader);
  for (const ReadChunk& c : chunks) {
    ASSERT_EQ(c.kind, ChunkKind::kKernelsSeen);
    ASSERT_LE(c.payload.size(), kMaxKernelChunkPayload);
    auto decoded = decode_kernels_seen(c.payload);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    ASSERT_LE(decoded->size(), SpoolWriter::kMaxKernelsSeenPerChunk);
    for (const KernelSeen& k : *decoded) back.push_back({k.launches, k.name});
  }
  EXPECT_GE(chunks.size(), 4u);  // 300 small ones need 3, the big ones one each
  ASSERT_EQ(back.size(), 302u);
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(back[i].name, names[i]);
    EXPECT_EQ(back[i].launches, i + 1);
  }
  EXPECT_EQ(back[300].name.size(), big.size());
  EXPECT_EQ(back[301].launches, 3u);
}

TEST(KernelChunks, WriterRefusesTooManyOrTooLarge) {
  TempDir dir;
  auto writer = SpoolWriter::open(dir.file("spool.bin"));
  ASSERT_TRUE(writer.ok());
  std::vector<MetricValue> many(SpoolWriter::kMaxKernelMetrics + 1, MetricValue{"m", 1});
  EXPECT_FALSE(writer->append_kernel_metrics(kHeader, kKernel, many));
  std::string long_name(kMaxKernelChunkPayload, 'n');
  EXPECT_FALSE(writer->append_kernel_metrics(kHeader, long_name, {}));
  std::vector<MetricValue> long_metrics(200,
                                        MetricValue{std::string_view(long_name).substr(0, 400), 1});
  EXPECT_FALSE(writer->append_kernel_metrics(kHeader, kKernel, long_metrics));
  EXPECT_EQ(writer->stats().rejected, 3u);
  EXPECT_EQ(writer->stats().chunks_written, 0u);
  many.resize(SpoolWriter::kMaxKernelMetrics);
  EXPECT_TRUE(writer->append_kernel_metrics(kHeader, kKernel, many));
}

// A decode that succeeds on damaged bytes must still describe a payload of
// exactly that size: every view lies inside it.
void expect_inside(std::span<const std::byte> payload, std::string_view view) {
  auto* begin = reinterpret_cast<const char*>(payload.data());
  EXPECT_GE(view.data(), begin);
  EXPECT_LE(view.data() + view.size(), begin + payload.size());
}

void check_decoders_on(std::span<const std::byte> payload) {
  auto km = decode_kernel_metrics(payload);
  if (km.ok()) {
    expect_inside(payload, km->kernel_name);
    for (const MetricValue& m : km->metrics) expect_inside(payload, m.name);
  } else {
    EXPECT_EQ(km.error().message.rfind("malformed kernel-metrics chunk: ", 0), 0u);
  }
  auto seen = decode_kernels_seen(payload);
  if (seen.ok()) {
    for (const KernelSeen& k : *seen) expect_inside(payload, k.name);
  } else {
    EXPECT_EQ(seen.error().message.rfind("malformed kernels-seen chunk: ", 0), 0u);
  }
}

TEST(KernelChunks, EveryTruncationIsAnError) {
  SpoolWithKernels s = write_kernel_spool();
  for (size_t c : {1u, 2u, 3u}) {
    const std::vector<std::byte>& full = s.chunks[c].payload;
    for (size_t cut = 0; cut < full.size(); ++cut) {
      SCOPED_TRACE("chunk " + std::to_string(c) + " cut at " + std::to_string(cut));
      // An exact-size copy, so ASan sees a read past the cut.
      std::vector<std::byte> bytes(full.begin(), full.begin() + static_cast<ptrdiff_t>(cut));
      if (c == 3) {
        EXPECT_FALSE(decode_kernels_seen(bytes).ok());
      } else {
        EXPECT_FALSE(decode_kernel_metrics(bytes).ok());
      }
      check_decoders_on(bytes);
    }
    // One byte more is trailing garbage.
    std::vector<std::byte> longer = full;
    longer.push_back(std::byte{0});
    EXPECT_FALSE(c == 3 ? decode_kernels_seen(longer).ok() : decode_kernel_metrics(longer).ok());
  }
}

TEST(KernelChunks, EveryBitFlipIsSafe) {
  SpoolWithKernels s = write_kernel_spool();
  int refused = 0;
  for (size_t c : {1u, 2u, 3u}) {
    std::vector<std::byte> bytes = s.chunks[c].payload;
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        bytes[i] ^= std::byte(1u << bit);
        check_decoders_on(bytes);
        bool ok = c == 3 ? decode_kernels_seen(bytes).ok() : decode_kernel_metrics(bytes).ok();
        refused += ok ? 0 : 1;
        bytes[i] ^= std::byte(1u << bit);
      }
    }
  }
  // Flips in a length or count field break the layout; flips in values and names do not.
  EXPECT_GT(refused, 0);
}

TEST(KernelChunks, ReaderMutationsNeverPassDamageOff) {
  SpoolWithKernels s = write_kernel_spool();
  uint64_t seed = 20260102;
  if (const char* env = std::getenv("STRATA_MUTATION_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int i = 0; i < 2000 && std::chrono::steady_clock::now() < deadline; ++i) {
    SCOPED_TRACE("mutation " + std::to_string(i) + " seed " + std::to_string(seed));
    std::vector<std::byte> bytes = s.bytes;
    size_t body = bytes.size() - kFileHeaderSize;
    int flips = 1 + static_cast<int>(pick(4));
    for (int f = 0; f < flips; ++f) bytes[kFileHeaderSize + pick(body)] ^= std::byte(1u << pick(8));
    if (pick(4) == 0) bytes.resize(kFileHeaderSize + pick(body));
    auto reader = SpoolReader::from_bytes(std::move(bytes), "mutant");
    ASSERT_TRUE(reader.ok());
    for (const ReadChunk& c : testing::read_all(*reader)) {
      bool original = false;
      for (const ReadChunk& o : s.chunks) original |= o.kind == c.kind && o.payload == c.payload;
      EXPECT_TRUE(original) << "chunk at " << c.offset;
      if (c.kind == ChunkKind::kKernelMetrics) {
        EXPECT_TRUE(decode_kernel_metrics(c.payload).ok());
      } else if (c.kind == ChunkKind::kKernelsSeen) {
        EXPECT_TRUE(decode_kernels_seen(c.payload).ok());
      }
    }
  }
}

}  // namespace
}  // namespace strata::format
