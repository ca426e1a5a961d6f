// Randomized mutation of recorded perf buffers and random garbage through
// parse_records: it must not crash, must not hand out views outside its
// input, and its counters must add up. Bounded (a few thousand inputs, well
// under 10 s). The seed is printed; STRATA_FUZZ_SEED=N replays one.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>

#include "record_builder.h"
#include "sampler/perf_records.h"
#include "sampler/sampler.h"

namespace strata::sampler {
namespace {

// Checks that every view lies inside the parsed buffer.
struct BoundsSink : RecordSink {
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
  uint64_t violations = 0;
  uint64_t seen = 0;

  void inside(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    if (n == 0) return;
    if (b < begin || b + n > end) violations++;
  }
  void on_sample(const SampleRecord& r) override {
    seen++;
    inside(r.stack.data(), r.stack.size());
    if (r.stack.size() > r.stack_size) violations++;
    volatile uint64_t sum = 0;
    for (uint64_t v : r.callchain) sum = sum + v;  // touch: ASan catches stray spans
    for (uint64_t v : r.regs) sum = sum + v;
  }
  void on_mmap(const MmapRecord& r) override {
    seen++;
    inside(r.filename.data(), r.filename.size() + 1);  // its NUL is inside too
    if (r.has_build_id) inside(r.build_id, 20);
  }
  void on_comm(const CommRecord& r) override {
    seen++;
    inside(r.comm.data(), r.comm.size() + 1);
  }
  void on_task(const TaskRecord&) override { seen++; }
  void on_lost(const LostRecord&) override { seen++; }
  void on_throttle(const ThrottleRecord&) override { seen++; }
};

void check_parse(const std::vector<uint8_t>& input, const SampleLayout& layout) {
  BoundsSink sink;
  sink.begin = input.data();
  sink.end = input.data() + input.size();
  ParseStats st = parse_records(input, layout, sink);
  ASSERT_EQ(sink.violations, 0u);
  ASSERT_EQ(sink.seen, st.records);
  ASSERT_LE(st.bad_bytes, input.size());
  // Every record takes at least 8 bytes; a trailing fragment counts once.
  ASSERT_LE(st.records + st.unknown_records + st.bad_records, input.size() / 8 + 1);
  if (st.bad_bytes == 0) {
    ASSERT_EQ(st.bad_records, 0u);
  }
  if (st.bad_records == 0) {
    ASSERT_EQ(st.bad_bytes, 0u);
  }
}

uint64_t fuzz_seed() {
  if (const char* s = std::getenv("STRATA_FUZZ_SEED")) return std::strtoull(s, nullptr, 10);
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

// Offsets of the record headers in a well-formed buffer.
std::vector<size_t> record_offsets(const std::vector<uint8_t>& b) {
  std::vector<size_t> offs;
  size_t pos = 0;
  while (pos + 8 <= b.size()) {
    uint16_t size;
    std::memcpy(&size, b.data() + pos + 6, 2);
    if (size < 8) break;
    offs.push_back(pos);
    pos += size;
  }
  return offs;
}

std::vector<uint8_t> mutate(const std::vector<uint8_t>& base, std::mt19937_64& rng) {
  std::vector<uint8_t> b = base;
  const auto offs = record_offsets(base);
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !b.empty(); ++e) {
    switch (rng() % 7) {
      case 0:  // flip a bit anywhere
        b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // random byte
        b[rng() % b.size()] = static_cast<uint8_t>(rng());
        break;
      case 2: {  // lie in a record's size field
        if (offs.empty()) break;
        const size_t at = offs[rng() % offs.size()];
        if (at + 8 > b.size()) break;
        uint16_t size = static_cast<uint16_t>(rng());
        if (rng() % 2) size &= ~uint16_t{7};
        std::memcpy(b.data() + at + 6, &size, 2);
        break;
      }
      case 3: {  // overwrite an aligned word inside a record with a large count
        const size_t at = (rng() % b.size()) & ~size_t{7};
        if (at + 8 > b.size()) break;
        const uint64_t v = rng() % 3 == 0 ? ~0ull - (rng() % 16) : rng() % 70000;
        std::memcpy(b.data() + at, &v, 8);
        break;
      }
      case 4:  // truncate
        b.resize(rng() % (b.size() + 1));
        break;
      case 5: {  // insert junk
        const size_t at = rng() % (b.size() + 1);
        std::vector<uint8_t> junk(rng() % 24);
        for (auto& j : junk) j = static_cast<uint8_t>(rng());
        b.insert(b.begin() + static_cast<ptrdiff_t>(at), junk.begin(), junk.end());
        break;
      }
      case 6: {  // change a record's type
        if (offs.empty()) break;
        const size_t at = offs[rng() % offs.size()];
        if (at + 4 > b.size()) break;
        const uint32_t type = 1 + static_cast<uint32_t>(rng() % 22);
        std::memcpy(b.data() + at, &type, 4);
        break;
      }
    }
  }
  return b;
}

// A few hundred milliseconds of live perf output, when perf_event_open works.
std::vector<uint8_t> live_buffer(SampleLayout& layout) {
  std::vector<uint8_t> recorded;
  SamplerOptions o;
  o.on_ring_bytes = [&](std::span<const uint8_t> bytes) {
    if (recorded.size() < (1u << 20)) recorded.insert(recorded.end(), bytes.begin(), bytes.end());
  };
  auto r = sample_command({STRATA_SPIN_HELPER, "--ms", "100"}, o);
  if (!r) return {};
  layout = r->layout;
  return recorded;
}

TEST(ParseRecordsFuzzTest, MutationsAndGarbage) {
  const uint64_t seed = fuzz_seed();
  std::cout << "parse_records fuzz seed: " << seed << " (STRATA_FUZZ_SEED to replay)\n";
  RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto start = std::chrono::steady_clock::now();

  struct Base {
    std::vector<uint8_t> bytes;
    SampleLayout layout;
  };
  std::vector<Base> bases;
  bases.push_back({testing::mixed_dwarf_buffer(), testing::dwarf_layout()});
  {
    testing::RecordWriter w;
    w.comm(1, 1, "fp", true, 1);
    for (int i = 0; i < 10; ++i) w.fp_sample(0x1000 + i, 1, 1, i, {PERF_CONTEXT_USER, 1, 2, 3});
    bases.push_back({w.bytes(), testing::fp_layout()});
  }
  SampleLayout live_layout;
  auto live = live_buffer(live_layout);
  if (!live.empty()) {
    // Keep mutations cheap: a window of whole records from the recording.
    const auto offs = record_offsets(live);
    size_t end = 0;
    for (size_t o : offs) {
      if (o > 256 * 1024) break;
      end = o;
    }
    live.resize(end);
    bases.push_back({live, live_layout});
  }
  std::cout << "bases: " << bases.size() << (live.empty() ? " (no live recording)" : "") << "\n";

  for (const auto& base : bases) check_parse(base.bytes, base.layout);
  constexpr int kMutations = 2000;
  for (int i = 0; i < kMutations; ++i) {
    const Base& base = bases[static_cast<size_t>(i) % bases.size()];
    auto input = mutate(base.bytes, rng);
    ASSERT_NO_FATAL_FAILURE(check_parse(input, base.layout)) << "mutation " << i;
    // The same bytes under the other layouts: a layout mismatch is bad input too.
    ASSERT_NO_FATAL_FAILURE(check_parse(input, testing::fp_layout())) << "mutation " << i;
  }
  constexpr int kGarbage = 500;
  for (int i = 0; i < kGarbage; ++i) {
    std::vector<uint8_t> g(rng() % 4096);
    for (auto& c : g) c = static_cast<uint8_t>(rng());
    // Plausible headers now and then so that bodies get parsed, not only frames.
    for (size_t at = 0; at + 8 <= g.size(); at += 8 * (1 + rng() % 8)) {
      const uint32_t type = 1 + static_cast<uint32_t>(rng() % 14);
      const uint16_t size = static_cast<uint16_t>(8 * (1 + rng() % 64));
      std::memcpy(g.data() + at, &type, 4);
      std::memcpy(g.data() + at + 6, &size, 2);
    }
    ASSERT_NO_FATAL_FAILURE(check_parse(g, testing::dwarf_layout())) << "garbage " << i;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "fuzzed " << kMutations << " mutations + " << kGarbage << " garbage buffers in "
            << secs << " s\n";
  EXPECT_LT(secs, 10.0);
}

}  // namespace
}  // namespace strata::sampler
