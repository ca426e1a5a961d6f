// The sampler chunk decoders (format/sampler_payloads.h) and spool reader on hand-built bytes, and
// a bounded randomized-mutation test of both (shared/DESIGN.md: every reader of untrusted bytes).
// The seed is printed; set STRATA_FUZZ_SEED to replay.
#include "import/sigprof_spool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include "format/byte_order.h"
#include "format/payloads.h"
#include "format/sampler_payloads.h"
#include "format/spool_reader.h"
#include "format/spool_writer.h"
#include "util/temp_dir.h"

namespace strata::import {
namespace {

using namespace sampler;  // RawProfile, Sample, the register names

using Bytes = std::vector<std::byte>;

void put32(Bytes& b, uint32_t v) {
  size_t at = b.size();
  b.resize(at + 4);
  format::store_le32(b.data() + at, v);
}
void put64(Bytes& b, uint64_t v) {
  size_t at = b.size();
  b.resize(at + 8);
  format::store_le64(b.data() + at, v);
}

struct TestSample {
  uint64_t time;
  uint32_t overruns;
  std::array<uint64_t, format::kSamplerRegsPerSample> regs;
  std::vector<uint8_t> stack;
};

// The encoding sigprof_preload.cc writes in its handler.
Bytes samples_record(uint32_t tid, const std::vector<TestSample>& samples) {
  Bytes b;
  put32(b, tid);
  put32(b, static_cast<uint32_t>(samples.size()));
  for (const auto& s : samples) {
    put64(b, s.time);
    put32(b, s.overruns);
    put32(b, static_cast<uint32_t>(s.stack.size()));
    for (uint64_t r : s.regs) put64(b, r);
    for (uint8_t c : s.stack) b.push_back(std::byte{c});
    while (b.size() % 8) b.push_back(std::byte{0});
  }
  return b;
}

Bytes maps_record(uint64_t time, const std::string& text) {
  Bytes b;
  put64(b, time);
  for (char c : text) b.push_back(static_cast<std::byte>(c));
  return b;
}

Bytes counters_record(uint32_t hz, std::vector<uint64_t> totals) {
  Bytes b;
  put32(b, hz);
  put32(b, 16384);
  for (uint64_t t : totals) put64(b, t);
  return b;
}

const char* kMaps =
    "55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 1234                       /usr/bin/prog\n"
    "55d0c0a01000-55d0c0a05000 r-xp 00001000 fe:01 1234                       /usr/bin/prog\n"
    "7f0000000000-7f0000100000 r-xp 00028000 fe:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7f0000200000-7f0000300000 rw-p 00000000 00:00 0 \n"
    "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
    "garbage line\n";

std::vector<TestSample> some_samples() {
  return {
      {100, 0, {1, 2, 3, 0x55d0c0a01234, 5, 6, 7, 8}, {0xaa, 0xbb, 0xcc}},
      {200, 3, {9, 10, 11, 0x7f0000000010, 13, 14, 15, 16}, {}},
      {300, 0, {17, 18, 19, 20, 21, 22, 23, 24}, std::vector<uint8_t>(64, 0x5a)},
  };
}

TEST(SigprofDecodeTest, SamplesRoundTrip) {
  // The decoded stacks are views into the payload: it must outlive them.
  auto payload = samples_record(42, some_samples());
  auto record = format::decode_sampler_samples(payload);
  ASSERT_TRUE(record) << record.error().message;
  EXPECT_EQ(record->tid, 42u);
  ASSERT_EQ(record->samples.size(), 3u);
  const auto& s = record->samples;
  EXPECT_EQ(s[0].time, 100u);
  EXPECT_EQ(s[0].regs[3], 0x55d0c0a01234u);
  ASSERT_EQ(s[0].stack.size(), 3u);
  EXPECT_EQ(s[0].stack[1], std::byte{0xbb});
  EXPECT_EQ(s[1].overruns, 3u);
  EXPECT_TRUE(s[1].stack.empty());
  EXPECT_EQ(s[2].stack.size(), 64u);
}

TEST(SigprofDecodeTest, StrictAboutSizes) {
  Bytes b = samples_record(1, some_samples());
  Bytes longer = b;
  put64(longer, 0);
  EXPECT_FALSE(format::decode_sampler_samples(longer));
  Bytes shorter(b.begin(), b.end() - 8);
  EXPECT_FALSE(format::decode_sampler_samples(shorter));
  Bytes huge_count = b;
  format::store_le32(huge_count.data() + 4, 0xffffffffu);
  auto r = format::decode_sampler_samples(huge_count);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("malformed sampler-samples chunk"), std::string::npos);
  Bytes odd_counters = counters_record(1000, {1, 2});
  odd_counters.push_back(std::byte{0});
  EXPECT_FALSE(format::decode_sampler_counters(odd_counters));
  EXPECT_FALSE(format::decode_memory_map(Bytes(7)));
}

TEST(SigprofDecodeTest, CountersToleratesMoreOrFewerSlots) {
  auto fewer = format::decode_sampler_counters(counters_record(250, {7, 8}));
  ASSERT_TRUE(fewer);
  EXPECT_EQ(fewer->hz, 250u);
  EXPECT_EQ(fewer->totals[format::kSamplesTaken], 7u);
  EXPECT_EQ(fewer->totals[format::kSamplesDropped], 8u);
  EXPECT_EQ(fewer->totals[format::kHandlerReplaced], 0u);
  auto more = format::decode_sampler_counters(
      counters_record(250, std::vector<uint64_t>(format::kNumSamplerCounters + 5, 1)));
  ASSERT_TRUE(more);
  EXPECT_EQ(more->totals[format::kNumSamplerCounters - 1], 1u);
}

TEST(SigprofDecodeTest, ProcMapsKeepsExecutableMappingsAndCountsBadLines) {
  uint64_t bad = 0;
  auto maps = executable_mappings(kMaps, 7, 55, &bad);
  EXPECT_EQ(bad, 1u);
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].filename, "/usr/bin/prog");
  EXPECT_EQ(maps[0].addr, 0x55d0c0a01000u);
  EXPECT_EQ(maps[0].len, 0x4000u);
  EXPECT_EQ(maps[0].pgoff, 0x1000u);
  EXPECT_EQ(maps[0].maj, 0xfeu);
  EXPECT_EQ(maps[0].min, 1u);
  EXPECT_EQ(maps[0].ino, 1234u);
  EXPECT_EQ(maps[0].pid, 7u);
  EXPECT_EQ(maps[0].time, 55u);
  EXPECT_EQ(maps[1].filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(maps[2].filename, "[vdso]");
}

// A spool as libstrata_sigprof.so writes it, built with the real writer.
Bytes write_spool(bool close_it) {
  test_util::TempDir dir("strata-sigprof-test");
  const std::string path = dir.file("sigprof-1.bin");
  {
    auto writer = format::SpoolWriter::open(path);
    EXPECT_TRUE(writer) << writer.error().message;
    std::string cmdline = std::string("prog") + '\0';
    writer->append_process_info(static_cast<uint32_t>(getpid()), 1, "/usr/bin/prog", cmdline);
    Bytes maps = maps_record(10, kMaps);
    writer->append(format::ChunkKind::kMemoryMap, maps.data(), maps.size());
    writer->append_thread_name(static_cast<uint32_t>(getpid()), "prog");
    Bytes samples = samples_record(static_cast<uint32_t>(getpid()), some_samples());
    writer->append(format::ChunkKind::kSamplerSamples, samples.data(), samples.size());
    Bytes counters = counters_record(1000, std::vector<uint64_t>(format::kNumSamplerCounters, 0));
    writer->append(format::ChunkKind::kSamplerCounters, counters.data(), counters.size());
    if (close_it) writer->close();
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out(raw.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

RawProfile empty_profile() {
  RawProfile p;
  p.period_ns = 1'000'000;
  p.regs_per_sample = format::kSamplerRegsPerSample;
  p.regs_mask = kDwarfRegsMask;
  return p;
}

// Every sample must point inside the profile's arenas, whatever the input.
void expect_consistent(const RawProfile& p) {
  for (const Sample& s : p.samples) {
    ASSERT_LE((s.regs_index + 1) * format::kSamplerRegsPerSample, p.regs.size());
    ASSERT_LE(s.stack_offset + s.stack_size, p.stacks.size());
    ASSERT_EQ(s.ip, p.regs[s.regs_index * format::kSamplerRegsPerSample + 3]);
    ASSERT_GE(s.period, p.period_ns);
  }
}

TEST(SigprofDecodeTest, SpoolIntoRawProfile) {
  auto reader = format::SpoolReader::from_bytes(write_spool(true), "sigprof-1.bin");
  ASSERT_TRUE(reader) << reader.error().message;
  RawProfile p = empty_profile();
  SpoolSummary s = add_sigprof_spool(*reader, &p);
  EXPECT_EQ(s.pid, static_cast<uint32_t>(getpid()));
  EXPECT_TRUE(s.has_process_info);
  EXPECT_EQ(s.ppid, 1u);
  EXPECT_EQ(s.samples, 3u);
  EXPECT_EQ(s.bad_records, 0u);
  EXPECT_EQ(s.bad_map_lines, 1u);
  EXPECT_TRUE(s.have_counters);
  EXPECT_TRUE(s.stats.intact());
  ASSERT_EQ(p.samples.size(), 3u);
  expect_consistent(p);
  EXPECT_EQ(p.samples[1].period, 4'000'000u);  // 3 overruns
  EXPECT_EQ(p.reg(p.samples[0], kRegIp), 0x55d0c0a01234u);
  EXPECT_EQ(p.reg(p.samples[0], kRegBx), 1u);
  EXPECT_EQ(p.reg(p.samples[0], kRegR15), 8u);
  ASSERT_EQ(p.stack_of(p.samples[0]).size(), 3u);
  EXPECT_EQ(p.stack_of(p.samples[0])[2], 0xcc);
  ASSERT_EQ(p.mmaps[s.pid].size(), 3u);
  ASSERT_EQ(p.comms.size(), 1u);
  EXPECT_TRUE(p.comms[0].exec);
  EXPECT_EQ(p.comms[0].name, "prog");

  // The same maps again (a later snapshot) add nothing.
  auto again = format::SpoolReader::from_bytes(write_spool(false), "sigprof-1.bin");
  ASSERT_TRUE(again);
  add_sigprof_spool(*again, &p);
  EXPECT_EQ(p.mmaps[s.pid].size(), 3u);
  EXPECT_EQ(p.samples.size(), 6u);
}

uint64_t fuzz_seed() {
  if (const char* env = std::getenv("STRATA_FUZZ_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

Bytes mutate(const Bytes& original, std::mt19937_64& rng) {
  Bytes b = original;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !b.empty(); ++e) {
    switch (rng() % 5) {
      case 0:  // flip a bit
        b[rng() % b.size()] ^= std::byte{static_cast<uint8_t>(1u << (rng() % 8))};
        break;
      case 1:  // truncate
        b.resize(rng() % b.size());
        break;
      case 2: {  // overwrite a 32-bit field with an interesting value
        if (b.size() < 4) break;
        static const uint32_t kValues[] = {0, 1, 7, 8, 0x7fffffff, 0xffffffff, 65528, 65536};
        size_t at = (rng() % (b.size() - 3)) & ~size_t{3};
        format::store_le32(b.data() + at, kValues[rng() % std::size(kValues)]);
        break;
      }
      case 3:  // append junk
        for (int i = 0, n = static_cast<int>(rng() % 32); i < n; ++i) {
          b.push_back(static_cast<std::byte>(rng()));
        }
        break;
      default: {  // duplicate a slice
        size_t from = rng() % b.size();
        size_t len = std::min<size_t>(rng() % 64, b.size() - from);
        b.insert(b.begin() + static_cast<ptrdiff_t>(rng() % b.size()), b.begin() + from,
                 b.begin() + from + len);
        break;
      }
    }
  }
  return b;
}

TEST(SigprofDecodeFuzzTest, MutatedRecordsNeverReadOutOfBounds) {
  const uint64_t seed = fuzz_seed();
  std::printf("seed %llu (STRATA_FUZZ_SEED to replay)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::vector<Bytes> corpus = {samples_record(3, some_samples()), maps_record(1, kMaps),
                                     counters_record(1000, {1, 2, 3, 4, 5, 6, 7, 8, 9})};
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    const size_t which = rng() % corpus.size();
    Bytes b = mutate(corpus[which], rng);
    if (which == 0) {
      auto record = format::decode_sampler_samples(b);
      if (!record) continue;
      ++decoded;
      for (const auto& s : record->samples) {
        ASSERT_GE(s.stack.data(), b.data());
        ASSERT_LE(s.stack.data() + s.stack.size(), b.data() + b.size()) << "seed " << seed;
      }
    } else if (which == 1) {
      auto record = format::decode_memory_map(b);
      if (!record) continue;
      ++decoded;
      uint64_t bad = 0;
      for (const auto& m : executable_mappings(record->text, 1, 0, &bad)) {
        ASSERT_GE(m.addr + m.len, m.addr) << "seed " << seed;
      }
    } else if (format::decode_sampler_counters(b)) {
      ++decoded;
    }
  }
  EXPECT_GT(decoded, 0);
}

TEST(SigprofDecodeFuzzTest, MutatedSpoolsGiveConsistentProfiles) {
  const uint64_t seed = fuzz_seed();
  std::printf("seed %llu (STRATA_FUZZ_SEED to replay)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const Bytes original = write_spool(true);
  for (int i = 0; i < 3000; ++i) {
    Bytes b = mutate(original, rng);
    auto reader = format::SpoolReader::from_bytes(std::move(b), "fuzz.bin");
    if (!reader) continue;  // the header was hit
    RawProfile p = empty_profile();
    SpoolSummary s = add_sigprof_spool(*reader, &p);
    ASSERT_LE(s.samples, 3u * 2) << "seed " << seed;
    expect_consistent(p);
    if (HasFatalFailure()) {
      ADD_FAILURE() << "seed " << seed << " iteration " << i;
      return;
    }
  }
}

}  // namespace
}  // namespace strata::import
