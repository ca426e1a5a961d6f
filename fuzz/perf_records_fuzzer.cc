// The perf ring-buffer record parser (src/sampler/perf_records) on arbitrary
// bytes. Input layout (little-endian, as the seeds in corpus/perf_records/
// are written by perf_records_seeds.cc):
//   u64 sample_type, u64 sample_regs_user,
//   u64 control: bit 0 sample_id_all; bits 8-31 the ring's tail position;
//                bits 32-47 head - tail,
//   then the records: parsed as they are, and again through view_ring with
//   the record bytes taken as a ring of the largest power-of-two size they hold.
// Promises checked (a broken one aborts, a crash to libFuzzer and the replay
// test): no view outside the parsed bytes, the counters add up, view_ring
// refuses positions more than a ring apart. The callchain and registers,
// which the parser copies, are read whole (ASan checks them).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "sampler/perf_records.h"

namespace {

using namespace strata::sampler;

void expect(bool ok) {
  if (!ok) std::abort();
}

struct BoundsSink : RecordSink {
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
  uint64_t seen = 0;
  uint64_t sum = 0;

  void inside(const void* p, size_t n) {
    if (n == 0) return;
    const auto* b = static_cast<const uint8_t*>(p);
    expect(b >= begin && b <= end && n <= static_cast<size_t>(end - b));
  }
  void on_sample(const SampleRecord& r) override {
    seen++;
    // The callchain and registers are copied out (aligned) by the parser:
    // read them whole, so ASan sees a span longer than its copy.
    for (uint64_t v : r.callchain) sum += v;
    for (uint64_t v : r.regs) sum += v;
    inside(r.stack.data(), r.stack.size());
    expect(r.stack.size() <= r.stack_size);
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

void check_parse(std::span<const uint8_t> bytes, const SampleLayout& layout) {
  BoundsSink sink;
  sink.begin = bytes.data();
  sink.end = bytes.data() + bytes.size();
  ParseStats st = parse_records(bytes, layout, sink);
  expect(sink.seen == st.records);
  expect(st.bad_bytes <= bytes.size());
  // Every record takes at least 8 bytes; a trailing fragment counts once.
  expect(st.records + st.unknown_records + st.bad_records <= bytes.size() / 8 + 1);
  expect((st.bad_bytes == 0) == (st.bad_records == 0));
}

uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 24) return 0;
  SampleLayout layout;
  layout.sample_type = load_u64(data);
  layout.sample_regs_user = load_u64(data + 8);
  const uint64_t control = load_u64(data + 16);
  layout.sample_id_all = (control & 1) != 0;
  // A copy, 8-byte aligned like the kernel's ring, and exactly as long as
  // the records, so ASan sees any read past them.
  std::vector<uint8_t> records(data + 24, data + size);
  check_parse(records, layout);

  if (records.empty()) return 0;
  uint64_t ring_size = 1;
  while (ring_size * 2 <= records.size()) ring_size *= 2;
  const uint64_t tail = (control >> 8) & 0xffffff;
  const uint64_t head = tail + ((control >> 32) & 0xffff);
  std::vector<uint8_t> scratch;
  auto view = view_ring(records.data(), ring_size, tail, head, scratch);
  expect(view.has_value() == (head - tail <= ring_size));
  if (view) {
    expect(view->size() == head - tail);
    check_parse(*view, layout);
  }
  return 0;
}
