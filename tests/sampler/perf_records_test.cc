// The record parser on hand-built records: every type, the ring copy helper,
// and records whose size fields lie.
#include "sampler/perf_records.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include "record_builder.h"
#include "sampler/sampler.h"

namespace strata::sampler {
namespace {

using testing::CollectingSink;
using testing::dwarf_layout;
using testing::fp_layout;
using testing::RecordWriter;

std::vector<uint8_t> iota_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 1);
  return v;
}

TEST(SampleLayoutTest, TrailerSizeFollowsSampleType) {
  EXPECT_EQ(dwarf_layout().sample_id_size(), 24u);  // TID, TIME, CPU
  SampleLayout none{PERF_SAMPLE_IP, 0, true};
  EXPECT_EQ(none.sample_id_size(), 0u);
  SampleLayout off = dwarf_layout();
  off.sample_id_all = false;
  EXPECT_EQ(off.sample_id_size(), 0u);
  SampleLayout all{kSupportedSampleType, 0, true};
  EXPECT_EQ(all.sample_id_size(), 48u);
  EXPECT_TRUE(all.supported());
  EXPECT_FALSE((SampleLayout{PERF_SAMPLE_READ, 0, true}).supported());
}

TEST(ParseRecordsTest, DwarfSampleKeepsOnlyDynSizeStackBytes) {
  RecordWriter w;
  const auto stack = iota_bytes(100);
  w.dwarf_sample(0x401234, 10, 11, 999, 1, 1'000'000, {1, 2, 3, 4, 5, 6, 7, 8}, stack, 512);
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), dwarf_layout(), sink);
  EXPECT_EQ(st.records, 1u);
  EXPECT_EQ(st.bad_records, 0u);
  ASSERT_EQ(sink.samples.size(), 1u);
  const auto& s = sink.samples[0];
  EXPECT_EQ(s.r.ip, 0x401234u);
  EXPECT_EQ(s.r.where.pid, 10u);
  EXPECT_EQ(s.r.where.tid, 11u);
  EXPECT_EQ(s.r.where.time, 999u);
  EXPECT_EQ(s.r.where.cpu, 1u);
  EXPECT_EQ(s.r.period, 1'000'000u);
  EXPECT_EQ(s.r.regs_abi, static_cast<uint64_t>(PERF_SAMPLE_REGS_ABI_64));
  EXPECT_EQ(s.regs, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(s.stack, stack);
  EXPECT_EQ(s.r.stack_size, 512u);
}

TEST(ParseRecordsTest, SampleWithoutRegsOrStack) {
  RecordWriter w;
  w.dwarf_sample(0x10, 1, 1, 2, 0, 5, {}, {}, 0);
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), dwarf_layout(), sink);
  EXPECT_EQ(st.records, 1u);
  ASSERT_EQ(sink.samples.size(), 1u);
  EXPECT_EQ(sink.samples[0].r.regs_abi, 0u);
  EXPECT_TRUE(sink.samples[0].regs.empty());
  EXPECT_TRUE(sink.samples[0].stack.empty());
}

TEST(ParseRecordsTest, FramePointerCallchain) {
  RecordWriter w;
  w.fp_sample(0x401000, 5, 6, 7, {PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000});
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), fp_layout(), sink);
  EXPECT_EQ(st.records, 1u);
  ASSERT_EQ(sink.samples.size(), 1u);
  EXPECT_EQ(sink.samples[0].callchain,
            (std::vector<uint64_t>{PERF_CONTEXT_USER, 0x401000, 0x402000, 0x403000}));
}

TEST(ParseRecordsTest, Mmap2WithInode) {
  RecordWriter w;
  w.mmap2_inode(42, 43, 0x400000, 0x3000, 0x1000, 777, "/usr/bin/thing", 55);
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), dwarf_layout(), sink);
  EXPECT_EQ(st.records, 1u);
  ASSERT_EQ(sink.mmaps.size(), 1u);
  const auto& [m, name] = sink.mmaps[0];
  EXPECT_TRUE(m.mmap2);
  EXPECT_FALSE(m.has_build_id);
  EXPECT_EQ(m.pid, 42u);
  EXPECT_EQ(m.tid, 43u);
  EXPECT_EQ(m.addr, 0x400000u);
  EXPECT_EQ(m.len, 0x3000u);
  EXPECT_EQ(m.pgoff, 0x1000u);
  EXPECT_EQ(m.maj, 8u);
  EXPECT_EQ(m.min, 1u);
  EXPECT_EQ(m.ino, 777u);
  EXPECT_EQ(m.ino_generation, 7u);
  EXPECT_EQ(m.prot, 5u);
  EXPECT_EQ(m.flags, 2u);
  EXPECT_EQ(name, "/usr/bin/thing");
  EXPECT_EQ(m.where.time, 55u);
  EXPECT_EQ(m.where.cpu, 1u);
}

TEST(ParseRecordsTest, Mmap2WithBuildId) {
  RecordWriter w;
  std::vector<uint8_t> id = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  w.mmap2_build_id(9, 0x7f00, id, "/lib/libc.so.6", 3);
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), dwarf_layout(), sink);
  EXPECT_EQ(st.records, 1u);
  ASSERT_EQ(sink.mmaps.size(), 1u);
  const auto& [m, name] = sink.mmaps[0];
  EXPECT_TRUE(m.has_build_id);
  ASSERT_EQ(m.build_id_size, 16);
  EXPECT_EQ(m.ino, 0u);
  EXPECT_EQ(name, "/lib/libc.so.6");
  // The view points into the record; compare while it is alive.
  const auto& bytes = w.bytes();
  struct Check : RecordSink {
    std::vector<uint8_t> id;
    void on_mmap(const MmapRecord& r) override {
      id.assign(r.build_id, r.build_id + r.build_id_size);
    }
  } check;
  parse_records(bytes, dwarf_layout(), check);
  EXPECT_EQ(check.id, id);
}

TEST(ParseRecordsTest, OldMmap) {
  RecordWriter w;
  w.mmap1(3, 0x1000, 0x2000, "[vdso]", 4);
  CollectingSink sink;
  EXPECT_EQ(parse_records(w.bytes(), dwarf_layout(), sink).records, 1u);
  ASSERT_EQ(sink.mmaps.size(), 1u);
  EXPECT_FALSE(sink.mmaps[0].first.mmap2);
  EXPECT_EQ(sink.mmaps[0].second, "[vdso]");
  EXPECT_EQ(sink.mmaps[0].first.len, 0x2000u);
}

TEST(ParseRecordsTest, CommWithAndWithoutExec) {
  RecordWriter w;
  w.comm(7, 7, "spin_helper", true, 1);
  w.comm(7, 8, "worker", false, 2);
  w.comm(7, 9, "exactly8", false, 3);  // 8 chars: the NUL takes a whole extra word
  CollectingSink sink;
  EXPECT_EQ(parse_records(w.bytes(), dwarf_layout(), sink).records, 3u);
  ASSERT_EQ(sink.comms.size(), 3u);
  EXPECT_TRUE(sink.comms[0].first.exec);
  EXPECT_EQ(sink.comms[0].second, "spin_helper");
  EXPECT_FALSE(sink.comms[1].first.exec);
  EXPECT_EQ(sink.comms[1].first.tid, 8u);
  EXPECT_EQ(sink.comms[1].second, "worker");
  EXPECT_EQ(sink.comms[2].second, "exactly8");
}

TEST(ParseRecordsTest, ForkAndExit) {
  RecordWriter w;
  w.task(true, 10, 10, 11, 10, 100);
  w.task(false, 10, 10, 11, 10, 200);
  CollectingSink sink;
  EXPECT_EQ(parse_records(w.bytes(), dwarf_layout(), sink).records, 2u);
  ASSERT_EQ(sink.tasks.size(), 2u);
  EXPECT_TRUE(sink.tasks[0].fork);
  EXPECT_EQ(sink.tasks[0].tid, 11u);
  EXPECT_EQ(sink.tasks[0].ptid, 10u);
  EXPECT_EQ(sink.tasks[0].time, 100u);
  EXPECT_FALSE(sink.tasks[1].fork);
  EXPECT_EQ(sink.tasks[1].time, 200u);
}

TEST(ParseRecordsTest, LostAndThrottle) {
  RecordWriter w;
  w.lost(9, 17);
  w.lost_samples(4);
  w.throttle(true, 30, 1);
  w.throttle(false, 31, 1);
  CollectingSink sink;
  EXPECT_EQ(parse_records(w.bytes(), dwarf_layout(), sink).records, 4u);
  ASSERT_EQ(sink.lost.size(), 2u);
  EXPECT_FALSE(sink.lost[0].samples_only);
  EXPECT_EQ(sink.lost[0].id, 9u);
  EXPECT_EQ(sink.lost[0].lost, 17u);
  EXPECT_TRUE(sink.lost[1].samples_only);
  EXPECT_EQ(sink.lost[1].lost, 4u);
  ASSERT_EQ(sink.throttles.size(), 2u);
  EXPECT_TRUE(sink.throttles[0].throttle);
  EXPECT_EQ(sink.throttles[0].time, 30u);
  EXPECT_EQ(sink.throttles[0].where.cpu, 1u);
  EXPECT_FALSE(sink.throttles[1].throttle);
}

TEST(ParseRecordsTest, UnknownTypesAreSkippedAndCounted) {
  RecordWriter w;
  testing::Bytes body;
  body.u64(1).u64(2).u64(3);
  w.record(PERF_RECORD_SWITCH, 0, body);
  w.comm(1, 1, "after", false, 1);
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), dwarf_layout(), sink);
  EXPECT_EQ(st.unknown_records, 1u);
  EXPECT_EQ(st.records, 1u);
  EXPECT_EQ(st.bad_bytes, 0u);
  EXPECT_EQ(sink.comms.size(), 1u);
}

TEST(ParseRecordsTest, EmptyInput) {
  CollectingSink sink;
  ParseStats st = parse_records({}, dwarf_layout(), sink);
  EXPECT_EQ(st.records + st.bad_records + st.bad_bytes + st.unknown_records, 0u);
}

// Writes a header size into the record at `offset`.
void set_size(std::vector<uint8_t>& b, size_t offset, uint16_t size) {
  std::memcpy(b.data() + offset + 6, &size, 2);
}

TEST(ParseRecordsFramingTest, SizeBelowHeaderStopsParsing) {
  RecordWriter w;
  w.comm(1, 1, "a", false, 1);
  w.comm(1, 1, "b", false, 2);
  auto b = w.bytes();
  const size_t second = b.size() / 2;
  set_size(b, second, 0);
  CollectingSink sink;
  ParseStats st = parse_records(b, dwarf_layout(), sink);
  EXPECT_EQ(st.records, 1u);
  EXPECT_EQ(st.bad_records, 1u);
  EXPECT_EQ(st.bad_bytes, b.size() - second);
}

TEST(ParseRecordsFramingTest, SizeNotMultipleOf8) {
  RecordWriter w;
  w.comm(1, 1, "a", false, 1);
  auto b = w.bytes();
  set_size(b, 0, static_cast<uint16_t>(b.size() - 4));
  CollectingSink sink;
  ParseStats st = parse_records(b, dwarf_layout(), sink);
  EXPECT_EQ(st.records, 0u);
  EXPECT_EQ(st.bad_records, 1u);
  EXPECT_EQ(st.bad_bytes, b.size());
  EXPECT_TRUE(sink.comms.empty());
}

TEST(ParseRecordsFramingTest, SizePastTheEnd) {
  RecordWriter w;
  w.comm(1, 1, "a", false, 1);
  auto b = w.bytes();
  set_size(b, 0, static_cast<uint16_t>(b.size() + 8));
  CollectingSink sink;
  ParseStats st = parse_records(b, dwarf_layout(), sink);
  EXPECT_EQ(st.bad_records, 1u);
  EXPECT_EQ(st.bad_bytes, b.size());
}

TEST(ParseRecordsFramingTest, TruncatedHeader) {
  RecordWriter w;
  w.comm(1, 1, "a", false, 1);
  auto b = w.bytes();
  b.insert(b.end(), {1, 2, 3, 4});
  CollectingSink sink;
  ParseStats st = parse_records(b, dwarf_layout(), sink);
  EXPECT_EQ(st.records, 1u);
  EXPECT_EQ(st.bad_records, 1u);
  EXPECT_EQ(st.bad_bytes, 4u);
}

TEST(ParseRecordsBodyTest, RecordTooSmallForItsTypeIsSkipped) {
  RecordWriter w;
  testing::Bytes tiny;
  tiny.u64(1);  // a FORK needs 24 bytes + trailer
  w.record(PERF_RECORD_FORK, 0, tiny);
  w.record(PERF_RECORD_SAMPLE, 0, tiny);
  w.record(PERF_RECORD_MMAP2, 0, tiny);
  w.record(PERF_RECORD_THROTTLE, 0, tiny);
  w.comm(1, 1, "ok", false, 1);
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), dwarf_layout(), sink);
  EXPECT_EQ(st.bad_records, 4u);
  EXPECT_EQ(st.bad_bytes, 4u * 16);
  EXPECT_EQ(st.records, 1u);
  EXPECT_TRUE(sink.tasks.empty());
  EXPECT_TRUE(sink.samples.empty());
  EXPECT_EQ(sink.comms.size(), 1u);
}

TEST(ParseRecordsBodyTest, DynSizeLargerThanStackIsRejected) {
  RecordWriter w;
  w.dwarf_sample(1, 1, 1, 1, 0, 1, {1, 2, 3, 4, 5, 6, 7, 8}, iota_bytes(64), 64);
  auto b = w.bytes();
  const uint64_t huge = 65;
  std::memcpy(b.data() + b.size() - 8, &huge, 8);  // dyn_size is the last word
  CollectingSink sink;
  ParseStats st = parse_records(b, dwarf_layout(), sink);
  EXPECT_EQ(st.bad_records, 1u);
  EXPECT_EQ(st.bad_bytes, b.size());
  EXPECT_TRUE(sink.samples.empty());
}

TEST(ParseRecordsBodyTest, StackSizeBeyondRecordIsRejected) {
  RecordWriter w;
  w.dwarf_sample(1, 1, 1, 1, 0, 1, {1, 2, 3, 4, 5, 6, 7, 8}, iota_bytes(64), 64);
  auto b = w.bytes();
  // stack size word: header 8 + ip/tid/time/cpu/period 40 + abi 8 + regs 64.
  const uint64_t big = 1ull << 40;
  std::memcpy(b.data() + 8 + 40 + 8 + 64, &big, 8);
  CollectingSink sink;
  EXPECT_EQ(parse_records(b, dwarf_layout(), sink).bad_records, 1u);
  EXPECT_TRUE(sink.samples.empty());
}

TEST(ParseRecordsBodyTest, CallchainCountBeyondRecordIsRejected) {
  RecordWriter w;
  w.fp_sample(1, 1, 1, 1, {PERF_CONTEXT_USER, 1});
  auto b = w.bytes();
  const uint64_t nr = ~0ull / 4;  // nr * 8 would overflow a naive bound check
  std::memcpy(b.data() + 8 + 40, &nr, 8);
  CollectingSink sink;
  EXPECT_EQ(parse_records(b, fp_layout(), sink).bad_records, 1u);
  EXPECT_TRUE(sink.samples.empty());
}

TEST(ParseRecordsBodyTest, TrailingBytesInSampleAreRejected) {
  RecordWriter w;
  testing::Bytes body;
  body.u64(1).u32(1).u32(1).u64(1).u32(0).u32(0).u64(1).u64(2).u64(PERF_CONTEXT_USER).u64(5);
  body.u64(0xabad1dea);  // one word more than the layout explains
  w.record(PERF_RECORD_SAMPLE, 0, body);
  CollectingSink sink;
  EXPECT_EQ(parse_records(w.bytes(), fp_layout(), sink).bad_records, 1u);
}

TEST(ParseRecordsBodyTest, FilenameWithoutTerminatorIsRejected) {
  RecordWriter w;
  testing::Bytes b;
  b.u32(1).u32(1).u64(0).u64(0).u64(0).u32(0).u32(0).u64(0).u64(0).u32(0).u32(0);
  b.raw("abcdefgh", 8);  // no NUL before the trailer
  RecordWriter::trailer(b, 1, 1, 1, 0);
  w.record(PERF_RECORD_MMAP2, 0, b);
  CollectingSink sink;
  EXPECT_EQ(parse_records(w.bytes(), dwarf_layout(), sink).bad_records, 1u);
  EXPECT_TRUE(sink.mmaps.empty());
}

TEST(ParseRecordsBodyTest, BuildIdSizeAbove20IsRejected) {
  RecordWriter w;
  w.mmap2_build_id(1, 0, std::vector<uint8_t>(20, 1), "x", 1);
  auto b = w.bytes();
  b[8 + 32] = 21;  // build_id_size after pid/tid/addr/len/pgoff
  CollectingSink sink;
  EXPECT_EQ(parse_records(b, dwarf_layout(), sink).bad_records, 1u);
}

TEST(ParseRecordsBodyTest, UnsupportedLayoutRejectsEveryRecord) {
  RecordWriter w;
  w.comm(1, 1, "a", false, 1);
  w.comm(1, 1, "b", false, 2);
  SampleLayout layout = dwarf_layout();
  layout.sample_type |= PERF_SAMPLE_READ;
  CollectingSink sink;
  ParseStats st = parse_records(w.bytes(), layout, sink);
  EXPECT_EQ(st.bad_records, 2u);
  EXPECT_EQ(st.bad_bytes, w.bytes().size());
  EXPECT_TRUE(sink.comms.empty());
}

TEST(ParseRecordsTest, MixedBufferParsesCompletely) {
  auto b = testing::mixed_dwarf_buffer();
  CollectingSink sink;
  ParseStats st = parse_records(b, dwarf_layout(), sink);
  EXPECT_EQ(st.bad_records, 0u);
  EXPECT_EQ(st.bad_bytes, 0u);
  EXPECT_EQ(st.records, 19u);
  EXPECT_EQ(sink.samples.size(), 9u);
  EXPECT_EQ(sink.mmaps.size(), 3u);
}

TEST(ViewRingTest, ContiguousBytesAreViewedInPlaceWrappedOnesUnwrapped) {
  std::vector<uint8_t> ring(64);
  for (size_t i = 0; i < ring.size(); ++i) ring[i] = static_cast<uint8_t>(i);
  std::vector<uint8_t> scratch;
  auto v = view_ring(ring.data(), 64, 8, 24, scratch);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->data(), ring.data() + 8);  // no copy
  EXPECT_EQ(std::vector<uint8_t>(v->begin(), v->end()),
            std::vector<uint8_t>(ring.begin() + 8, ring.begin() + 24));
  EXPECT_TRUE(scratch.empty());
  // Free-running positions: tail 3*64+48 = ring offset 48, 32 bytes wrap to 16.
  v = view_ring(ring.data(), 64, 3 * 64 + 48, 3 * 64 + 80, scratch);
  ASSERT_TRUE(v);
  std::vector<uint8_t> expect(ring.begin() + 48, ring.end());
  expect.insert(expect.end(), ring.begin(), ring.begin() + 16);
  EXPECT_EQ(v->data(), scratch.data());
  EXPECT_EQ(std::vector<uint8_t>(v->begin(), v->end()), expect);
  // Exactly full, starting mid-ring.
  v = view_ring(ring.data(), 64, 32, 96, scratch);
  ASSERT_TRUE(v);
  ASSERT_EQ(v->size(), 64u);
  EXPECT_EQ((*v)[0], 32);
  EXPECT_EQ((*v)[63], 31);
  // Exactly full from offset 0: the whole ring, in place.
  v = view_ring(ring.data(), 64, 128, 192, scratch);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->data(), ring.data());
  EXPECT_EQ(v->size(), 64u);
}

TEST(ViewRingTest, EmptyAndInconsistentPositions) {
  std::vector<uint8_t> ring(64, 1);
  std::vector<uint8_t> scratch;
  auto v = view_ring(ring.data(), 64, 40, 40, scratch);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->empty());
  EXPECT_FALSE(view_ring(ring.data(), 64, 0, 65, scratch));  // more than the ring holds
  EXPECT_FALSE(view_ring(ring.data(), 64, 10, 5, scratch));  // head behind tail
  EXPECT_FALSE(view_ring(ring.data(), 48, 0, 8, scratch));   // not a power of two
  EXPECT_FALSE(view_ring(ring.data(), 0, 0, 0, scratch));
}

TEST(ViewRingTest, WrappedRecordsParse) {
  // Records laid into a small ring across its end come back parseable.
  RecordWriter w;
  w.comm(1, 1, "first", false, 1);
  w.task(true, 1, 1, 2, 1, 2);
  const auto& recs = w.bytes();
  const uint64_t size = 128;
  ASSERT_LE(recs.size(), size);
  std::vector<uint8_t> ring(size, 0xcc);
  const uint64_t tail = 5 * size + 96;
  for (size_t i = 0; i < recs.size(); ++i) ring[(tail + i) % size] = recs[i];
  std::vector<uint8_t> scratch;
  auto v = view_ring(ring.data(), size, tail, tail + recs.size(), scratch);
  ASSERT_TRUE(v);
  CollectingSink sink;
  ParseStats st = parse_records(*v, dwarf_layout(), sink);
  EXPECT_EQ(st.records, 2u);
  EXPECT_EQ(st.bad_records, 0u);
}

TEST(ParseCpuListTest, SysfsForms) {
  EXPECT_EQ(parse_cpu_list("0-1\n"), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_cpu_list("0"), (std::vector<int>{0}));
  EXPECT_EQ(parse_cpu_list("0-2,5,7-8"), (std::vector<int>{0, 1, 2, 5, 7, 8}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_TRUE(parse_cpu_list("a-b").empty());
  EXPECT_TRUE(parse_cpu_list("3-1").empty());
  EXPECT_TRUE(parse_cpu_list("1,,2").empty());
}

TEST(RawProfileTest, RegisterLookupByPerfNumber) {
  RawProfile p;
  p.regs_mask = kDwarfRegsMask;
  p.regs_per_sample = 8;
  // In bit order: bx(1) bp(6) sp(7) ip(8) r12..r15(20..23).
  p.regs = {11, 16, 17, 18, 120, 130, 140, 150};
  Sample s;
  s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
  s.regs_index = 0;
  EXPECT_EQ(p.reg(s, kRegBx), 11u);
  EXPECT_EQ(p.reg(s, kRegSp), 17u);
  EXPECT_EQ(p.reg(s, kRegIp), 18u);
  EXPECT_EQ(p.reg(s, kRegR15), 150u);
  EXPECT_FALSE(p.reg(s, kRegAx).has_value());
  s.regs_abi = 0;
  EXPECT_FALSE(p.reg(s, kRegSp).has_value());
  s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
  s.regs_index = 1;  // past the arena
  EXPECT_TRUE(p.regs_of(s).empty());
}

}  // namespace
}  // namespace strata::sampler
