#include "sampler/perf_records.h"

#include <linux/perf_event.h>

#include <bit>
#include <cstring>

namespace strata::sampler {

const uint64_t kSupportedSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

size_t SampleLayout::sample_id_size() const {
  if (!sample_id_all) return 0;
  size_t n = 0;
  for (uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                       PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER}) {
    if (sample_type & bit) n += 8;
  }
  return n;
}

bool SampleLayout::supported() const {
  return (sample_type & ~kSupportedSampleType) == 0;
}

ParseStats& ParseStats::operator+=(const ParseStats& other) {
  records += other.records;
  unknown_records += other.unknown_records;
  bad_records += other.bad_records;
  bad_bytes += other.bad_bytes;
  return *this;
}

namespace {

// Bounds-checked little reader over one record body. Every read fails softly
// (ok() turns false, zeros come back) so that the record parsers stay linear.
// Threading: a local value, used by one thread.
class Cursor {
 public:
  Cursor(const uint8_t* begin, size_t size) : p_(begin), left_(size) {}

  bool ok() const { return ok_; }
  size_t left() const { return left_; }
  const uint8_t* here() const { return p_; }

  uint64_t u64() { return read<uint64_t>(); }
  uint32_t u32() { return read<uint32_t>(); }
  uint16_t u16() { return read<uint16_t>(); }
  uint8_t u8() { return read<uint8_t>(); }

  // Returns the start of n bytes and skips them, or nullptr.
  const uint8_t* take(uint64_t n) {
    if (!ok_ || n > left_) {
      ok_ = false;
      return nullptr;
    }
    const uint8_t* at = p_;
    p_ += n;
    left_ -= static_cast<size_t>(n);
    return at;
  }

 private:
  template <class T>
  T read() {
    T value{};
    if (const uint8_t* at = take(sizeof(T))) std::memcpy(&value, at, sizeof(T));
    return value;
  }

  const uint8_t* p_;
  size_t left_;
  bool ok_ = true;
};

// Copies n u64s out of the record into scratch: record bytes need not be
// 8-aligned in memory (a fuzzer or a file may hand any span).
bool read_u64s(Cursor& c, uint64_t n, std::vector<uint64_t>& scratch) {
  if (n > c.left() / 8) return false;
  const uint8_t* at = c.take(n * 8);
  if (!at) return false;
  scratch.resize(static_cast<size_t>(n));
  if (n) std::memcpy(scratch.data(), at, static_cast<size_t>(n) * 8);
  return true;
}

// Whether a record's fields were all there and nothing follows them (the
// kernel pads nothing after the last field we understand; trailing bytes
// would mean a layout mismatch).
bool read_exactly(const Cursor& c) {
  return c.ok() && c.left() == 0;
}

// The sample_id trailer of a non-sample record: the last sample_id_size bytes.
bool read_sample_id(const uint8_t* body, size_t body_size, const SampleLayout& layout,
                    SampleId& out, size_t& fixed_part) {
  size_t trailer = layout.sample_id_size();
  if (trailer > body_size) return false;
  fixed_part = body_size - trailer;
  Cursor c(body + fixed_part, trailer);
  if (layout.sample_type & PERF_SAMPLE_TID) {
    out.pid = c.u32();
    out.tid = c.u32();
  }
  if (layout.sample_type & PERF_SAMPLE_TIME) out.time = c.u64();
  if (layout.sample_type & PERF_SAMPLE_ID) out.id = c.u64();
  if (layout.sample_type & PERF_SAMPLE_STREAM_ID) c.u64();
  if (layout.sample_type & PERF_SAMPLE_CPU) {
    out.cpu = c.u32();
    c.u32();
  }
  if (layout.sample_type & PERF_SAMPLE_IDENTIFIER) out.id = c.u64();
  return c.ok();
}

std::string_view bounded_string(const uint8_t* at, size_t max) {
  const char* s = reinterpret_cast<const char*>(at);
  return std::string_view(s, strnlen(s, max));
}

struct Scratch {
  std::vector<uint64_t> callchain;
  std::vector<uint64_t> regs;
};

bool parse_sample(uint16_t misc, const uint8_t* body, size_t size, const SampleLayout& layout,
                  Scratch& scratch, RecordSink& sink) {
  const uint64_t type = layout.sample_type;
  Cursor c(body, size);
  SampleRecord r;
  r.misc = misc;
  if (type & PERF_SAMPLE_IDENTIFIER) r.where.id = c.u64();
  if (type & PERF_SAMPLE_IP) r.ip = c.u64();
  if (type & PERF_SAMPLE_TID) {
    r.where.pid = c.u32();
    r.where.tid = c.u32();
  }
  if (type & PERF_SAMPLE_TIME) r.where.time = c.u64();
  if (type & PERF_SAMPLE_ADDR) r.addr = c.u64();
  if (type & PERF_SAMPLE_ID) r.where.id = c.u64();
  if (type & PERF_SAMPLE_STREAM_ID) c.u64();
  if (type & PERF_SAMPLE_CPU) {
    r.where.cpu = c.u32();
    c.u32();
  }
  if (type & PERF_SAMPLE_PERIOD) r.period = c.u64();
  if (!c.ok()) return false;
  if (type & PERF_SAMPLE_CALLCHAIN) {
    uint64_t nr = c.u64();
    if (!c.ok() || !read_u64s(c, nr, scratch.callchain)) return false;
    r.callchain = scratch.callchain;
  }
  if (type & PERF_SAMPLE_REGS_USER) {
    r.regs_abi = c.u64();
    if (!c.ok()) return false;
    // The registers are present only when the abi is not NONE (a sample taken
    // in a kernel thread has no user registers).
    if (r.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
      if (!read_u64s(c, std::popcount(layout.sample_regs_user), scratch.regs)) return false;
      r.regs = scratch.regs;
    }
  }
  if (type & PERF_SAMPLE_STACK_USER) {
    uint64_t stack_size = c.u64();
    if (!c.ok()) return false;
    // dyn_size follows only when size is non-zero.
    if (stack_size != 0) {
      const uint8_t* data = c.take(stack_size);
      uint64_t dyn_size = c.u64();
      if (!c.ok() || dyn_size > stack_size) return false;
      r.stack = std::span<const uint8_t>(data, static_cast<size_t>(dyn_size));
      r.stack_size = stack_size;
    }
  }
  if (!read_exactly(c)) return false;
  sink.on_sample(r);
  return true;
}

// The frame of every non-sample record: the sample_id trailer into
// r.where, then `fields` reads the fixed part before it (returning whether
// it was well-formed), then the sink gets the record.
template <class Record, class Fields>
bool parse_non_sample(const uint8_t* body, size_t size, const SampleLayout& layout, Record& r,
                      Fields&& fields, void (RecordSink::*deliver)(const Record&),
                      RecordSink& sink) {
  size_t fixed = 0;
  if (!read_sample_id(body, size, layout, r.where, fixed)) return false;
  Cursor c(body, fixed);
  if (!fields(c)) return false;
  (sink.*deliver)(r);
  return true;
}

// The NUL-terminated string that ends a record's fixed part (a file name, a
// comm): false when it has no terminator inside the record.
bool read_last_string(const Cursor& c, std::string_view& out) {
  if (!c.ok() || c.left() == 0) return false;  // the string has at least its NUL
  out = bounded_string(c.here(), c.left());
  return out.size() < c.left();
}

bool parse_mmap(bool mmap2, uint16_t misc, const uint8_t* body, size_t size,
                const SampleLayout& layout, RecordSink& sink) {
  MmapRecord r;
  r.mmap2 = mmap2;
  r.misc = misc;
  auto fields = [&](Cursor& c) {
    r.pid = c.u32();
    r.tid = c.u32();
    r.addr = c.u64();
    r.len = c.u64();
    r.pgoff = c.u64();
    if (mmap2) {
      if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        r.has_build_id = true;
        r.build_id_size = c.u8();
        c.u8();
        c.u16();
        r.build_id = c.take(20);
        if (r.build_id_size > 20) return false;
      } else {
        r.maj = c.u32();
        r.min = c.u32();
        r.ino = c.u64();
        r.ino_generation = c.u64();
      }
      r.prot = c.u32();
      r.flags = c.u32();
    }
    return read_last_string(c, r.filename);
  };
  return parse_non_sample(body, size, layout, r, fields, &RecordSink::on_mmap, sink);
}

bool parse_comm(uint16_t misc, const uint8_t* body, size_t size, const SampleLayout& layout,
                RecordSink& sink) {
  CommRecord r;
  auto fields = [&](Cursor& c) {
    r.pid = c.u32();
    r.tid = c.u32();
    r.exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
    return read_last_string(c, r.comm);
  };
  return parse_non_sample(body, size, layout, r, fields, &RecordSink::on_comm, sink);
}

bool parse_task(bool fork, const uint8_t* body, size_t size, const SampleLayout& layout,
                RecordSink& sink) {
  TaskRecord r;
  r.fork = fork;
  auto fields = [&](Cursor& c) {
    r.pid = c.u32();
    r.ppid = c.u32();
    r.tid = c.u32();
    r.ptid = c.u32();
    r.time = c.u64();
    return read_exactly(c);
  };
  return parse_non_sample(body, size, layout, r, fields, &RecordSink::on_task, sink);
}

bool parse_lost(bool samples_only, const uint8_t* body, size_t size, const SampleLayout& layout,
                RecordSink& sink) {
  LostRecord r;
  r.samples_only = samples_only;
  auto fields = [&](Cursor& c) {
    if (!samples_only) r.id = c.u64();
    r.lost = c.u64();
    return read_exactly(c);
  };
  return parse_non_sample(body, size, layout, r, fields, &RecordSink::on_lost, sink);
}

bool parse_throttle(bool throttle, const uint8_t* body, size_t size, const SampleLayout& layout,
                    RecordSink& sink) {
  ThrottleRecord r;
  r.throttle = throttle;
  auto fields = [&](Cursor& c) {
    r.time = c.u64();
    r.id = c.u64();
    r.stream_id = c.u64();
    return read_exactly(c);
  };
  return parse_non_sample(body, size, layout, r, fields, &RecordSink::on_throttle, sink);
}

}  // namespace

ParseStats parse_records(std::span<const uint8_t> bytes, const SampleLayout& layout,
                         RecordSink& sink) {
  ParseStats stats;
  Scratch scratch;
  const bool layout_ok = layout.supported();
  size_t pos = 0;
  while (pos < bytes.size()) {
    const size_t left = bytes.size() - pos;
    perf_event_header h{};
    if (left < sizeof h) {
      stats.bad_records++;
      stats.bad_bytes += left;
      break;
    }
    std::memcpy(&h, bytes.data() + pos, sizeof h);
    if (h.size < sizeof h || h.size % 8 != 0 || h.size > left) {
      // Without a trustworthy size the next record cannot be found.
      stats.bad_records++;
      stats.bad_bytes += left;
      break;
    }
    const uint8_t* body = bytes.data() + pos + sizeof h;
    const size_t body_size = h.size - sizeof h;
    bool known = true;
    bool good = layout_ok;
    if (good) {
      switch (h.type) {
        case PERF_RECORD_SAMPLE:
          good = parse_sample(h.misc, body, body_size, layout, scratch, sink);
          break;
        case PERF_RECORD_MMAP:
        case PERF_RECORD_MMAP2:
          good = parse_mmap(h.type == PERF_RECORD_MMAP2, h.misc, body, body_size, layout, sink);
          break;
        case PERF_RECORD_COMM:
          good = parse_comm(h.misc, body, body_size, layout, sink);
          break;
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
          good = parse_task(h.type == PERF_RECORD_FORK, body, body_size, layout, sink);
          break;
        case PERF_RECORD_LOST:
        case PERF_RECORD_LOST_SAMPLES:
          good = parse_lost(h.type == PERF_RECORD_LOST_SAMPLES, body, body_size, layout, sink);
          break;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
          good = parse_throttle(h.type == PERF_RECORD_THROTTLE, body, body_size, layout, sink);
          break;
        default:
          known = false;
          break;
      }
    }
    if (!good) {
      stats.bad_records++;
      stats.bad_bytes += h.size;
    } else if (!known) {
      stats.unknown_records++;
    } else {
      stats.records++;
    }
    pos += h.size;
  }
  return stats;
}

std::optional<std::span<const uint8_t>> view_ring(const uint8_t* data, uint64_t size, uint64_t tail,
                                                  uint64_t head, std::vector<uint8_t>& scratch) {
  if (size == 0 || !std::has_single_bit(size)) return std::nullopt;
  const uint64_t n = head - tail;  // unsigned: a head behind tail shows up as huge
  if (n > size) return std::nullopt;
  const uint64_t start = tail & (size - 1);
  const uint64_t first = std::min(n, size - start);
  if (first == n) return std::span<const uint8_t>(data + start, static_cast<size_t>(n));
  scratch.resize(static_cast<size_t>(n));
  std::memcpy(scratch.data(), data + start, static_cast<size_t>(first));
  std::memcpy(scratch.data() + first, data, static_cast<size_t>(n - first));
  return std::span<const uint8_t>(scratch);
}

}  // namespace strata::sampler
