// Builds perf ring-buffer records by hand, in the kernel's layout
// (include/uapi/linux/perf_event.h), for the parser tests.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "sampler/perf_records.h"
#include "sampler/sampler.h"

namespace strata::sampler::testing {

class Bytes {
 public:
  Bytes& u64(uint64_t v) { return put(&v, 8); }
  Bytes& u32(uint32_t v) { return put(&v, 4); }
  Bytes& u16(uint16_t v) { return put(&v, 2); }
  Bytes& u8(uint8_t v) { return put(&v, 1); }
  Bytes& raw(const void* p, size_t n) { return put(p, n); }
  // A NUL-terminated string padded with NULs to a multiple of 8 bytes.
  Bytes& str8(const std::string& s) {
    put(s.data(), s.size());
    u8(0);
    while (v_.size() % 8) u8(0);
    return *this;
  }
  const std::vector<uint8_t>& data() const { return v_; }
  size_t size() const { return v_.size(); }

 private:
  Bytes& put(const void* p, size_t n) {
    const size_t at = v_.size();
    v_.resize(at + n);
    if (n) std::memcpy(v_.data() + at, p, n);
    return *this;
  }
  std::vector<uint8_t> v_;
};

inline const SampleLayout& dwarf_layout() {
  static const SampleLayout layout{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
                                   kDwarfRegsMask, true};
  return layout;
}

inline const SampleLayout& fp_layout() {
  static const SampleLayout layout{PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
                                   0, true};
  return layout;
}

// Appends records to one buffer. Non-sample records get the sample_id trailer
// of the TID|TIME|CPU layouts above.
class RecordWriter {
 public:
  void record(uint32_t type, uint16_t misc, const Bytes& body) {
    perf_event_header h{type, misc, static_cast<uint16_t>(8 + body.size())};
    out_.raw(&h, sizeof h).raw(body.data().data(), body.size());
  }

  static void trailer(Bytes& b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu) {
    b.u32(pid).u32(tid).u64(time).u32(cpu).u32(0);
  }

  void dwarf_sample(uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
                    uint64_t period, const std::vector<uint64_t>& regs,
                    const std::vector<uint8_t>& stack, uint64_t stack_size) {
    Bytes b;
    b.u64(ip).u32(pid).u32(tid).u64(time).u32(cpu).u32(0).u64(period);
    if (regs.empty()) {
      b.u64(PERF_SAMPLE_REGS_ABI_NONE);
    } else {
      b.u64(PERF_SAMPLE_REGS_ABI_64);
      for (uint64_t r : regs) b.u64(r);
    }
    b.u64(stack_size);
    if (stack_size) {
      std::vector<uint8_t> area(stack_size, 0xee);
      std::memcpy(area.data(), stack.data(), std::min<size_t>(stack.size(), stack_size));
      b.raw(area.data(), area.size());
      b.u64(stack.size());
    }
    record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, b);
  }

  void fp_sample(uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time,
                 const std::vector<uint64_t>& chain) {
    Bytes b;
    b.u64(ip).u32(pid).u32(tid).u64(time).u32(0).u32(0).u64(1'000'000);
    b.u64(chain.size());
    for (uint64_t c : chain) b.u64(c);
    record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, b);
  }

  void mmap2_inode(uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len, uint64_t pgoff,
                   uint64_t ino, const std::string& name, uint64_t time) {
    Bytes b;
    b.u32(pid).u32(tid).u64(addr).u64(len).u64(pgoff);
    b.u32(8).u32(1).u64(ino).u64(7);
    b.u32(PROT_READ_EXEC).u32(2).str8(name);
    trailer(b, pid, tid, time, 1);
    record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, b);
  }

  void mmap2_build_id(uint32_t pid, uint64_t addr, const std::vector<uint8_t>& id,
                      const std::string& name, uint64_t time) {
    Bytes b;
    b.u32(pid).u32(pid).u64(addr).u64(0x1000).u64(0);
    uint8_t area[20] = {};
    std::memcpy(area, id.data(), std::min<size_t>(id.size(), 20));
    b.u8(static_cast<uint8_t>(id.size())).u8(0).u16(0).raw(area, 20);
    b.u32(PROT_READ_EXEC).u32(2).str8(name);
    trailer(b, pid, pid, time, 0);
    record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, b);
  }

  void mmap1(uint32_t pid, uint64_t addr, uint64_t len, const std::string& name, uint64_t time) {
    Bytes b;
    b.u32(pid).u32(pid).u64(addr).u64(len).u64(0).str8(name);
    trailer(b, pid, pid, time, 0);
    record(PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, b);
  }

  void comm(uint32_t pid, uint32_t tid, const std::string& name, bool exec, uint64_t time) {
    Bytes b;
    b.u32(pid).u32(tid).str8(name);
    trailer(b, pid, tid, time, 0);
    record(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, b);
  }

  void task(bool fork, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time) {
    Bytes b;
    b.u32(pid).u32(ppid).u32(tid).u32(ptid).u64(time);
    trailer(b, pid, tid, time, 0);
    record(fork ? PERF_RECORD_FORK : PERF_RECORD_EXIT, 0, b);
  }

  void lost(uint64_t id, uint64_t n) {
    Bytes b;
    b.u64(id).u64(n);
    trailer(b, 0, 0, 5, 0);
    record(PERF_RECORD_LOST, 0, b);
  }

  void lost_samples(uint64_t n) {
    Bytes b;
    b.u64(n);
    trailer(b, 0, 0, 5, 0);
    record(PERF_RECORD_LOST_SAMPLES, 0, b);
  }

  void throttle(bool on, uint64_t time, uint32_t cpu) {
    Bytes b;
    b.u64(time).u64(3).u64(4);
    trailer(b, 0, 0, time, cpu);
    record(on ? PERF_RECORD_THROTTLE : PERF_RECORD_UNTHROTTLE, 0, b);
  }

  std::vector<uint8_t>& bytes() { return bytes_ = out_.data(); }

  static constexpr uint32_t PROT_READ_EXEC = 5;

 private:
  Bytes out_;
  std::vector<uint8_t> bytes_;
};

// Keeps copies of everything it is handed.
struct CollectingSink : RecordSink {
  struct OwnedSample {
    SampleRecord r;
    std::vector<uint64_t> regs;
    std::vector<uint8_t> stack;
    std::vector<uint64_t> callchain;
  };
  std::vector<OwnedSample> samples;
  std::vector<std::pair<MmapRecord, std::string>> mmaps;
  std::vector<std::pair<CommRecord, std::string>> comms;
  std::vector<TaskRecord> tasks;
  std::vector<LostRecord> lost;
  std::vector<ThrottleRecord> throttles;

  void on_sample(const SampleRecord& r) override {
    samples.push_back({r,
                       {r.regs.begin(), r.regs.end()},
                       {r.stack.begin(), r.stack.end()},
                       {r.callchain.begin(), r.callchain.end()}});
  }
  void on_mmap(const MmapRecord& r) override { mmaps.emplace_back(r, std::string(r.filename)); }
  void on_comm(const CommRecord& r) override { comms.emplace_back(r, std::string(r.comm)); }
  void on_task(const TaskRecord& r) override { tasks.push_back(r); }
  void on_lost(const LostRecord& r) override { lost.push_back(r); }
  void on_throttle(const ThrottleRecord& r) override { throttles.push_back(r); }
};

// One of every record type, as a realistic mixed buffer.
inline std::vector<uint8_t> mixed_dwarf_buffer() {
  RecordWriter w;
  w.comm(100, 100, "spin_helper", true, 10);
  w.mmap2_inode(100, 100, 0x400000, 0x2000, 0, 1234, "/usr/bin/spin_helper", 11);
  w.mmap2_build_id(100, 0x7f0000000000,
                   {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
                   "/lib/x86_64-linux-gnu/libc.so.6", 12);
  w.mmap1(100, 0x7fff0000, 0x2000, "[vdso]", 13);
  w.task(true, 100, 100, 101, 100, 14);
  std::vector<uint8_t> stack(200);
  for (size_t i = 0; i < stack.size(); ++i) stack[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 8; ++i) {
    w.dwarf_sample(0x401000 + i, 100, 100 + i % 2, 20 + i, i % 2, 1'000'000,
                   {1, 2, 3, 4, 5, 6, 7, 8}, stack, 256);
  }
  w.dwarf_sample(0x401100, 100, 101, 30, 0, 1'000'000, {}, {}, 0);
  w.lost(9, 3);
  w.lost_samples(2);
  w.throttle(true, 40, 1);
  w.throttle(false, 41, 1);
  w.task(false, 100, 100, 101, 100, 50);
  return w.bytes();
}

}  // namespace strata::sampler::testing
