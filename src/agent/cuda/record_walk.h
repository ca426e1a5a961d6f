// In-place processing of a completed CUPTI activity buffer before it goes to
// the spool: the string pointers in its records (kernel, marker, domain,
// device and resource names) point into CUPTI's memory and mean nothing in
// another process, so each is replaced by a strata string id and the text is
// written once, in a strings chunk ahead of the buffer (docs/agent.md).
//
// Record layout (CUPTI 13.0, cupti_activity.h): records lie back to back,
// each starting with CUpti_Activity{kind}, each as long as its kind's struct
// (a multiple of 8). cuptiActivityGetNextRecord steps by the same sizes;
// tests/agent/record_walk_test.cc checks that against libcupti. The walk is
// plain code with no CUPTI calls so it can run in a crash handler.
//
// Threading: walk_and_rewrite may run on the drain thread and in a signal
// handler at the same time on different buffers; StringIds is lock-free.
// Allocation: none; StringIds allocates its table once in init().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "format/cupti_record_sizes.h"
#include "format/payloads.h"
#include "format/spool_writer.h"

namespace strata::agent {

// The id of a string: FNV-1a 64 of its bytes, never 0 (0 stands for NULL).
uint64_t string_id(const char* text, size_t length);

// Remembers which string ids are already in the spool. Lock-free, fixed size.
class StringIds {
 public:
  static constexpr size_t kDefaultCapacity = 1u << 16;

  StringIds() = default;
  StringIds(const StringIds&) = delete;
  StringIds& operator=(const StringIds&) = delete;
  ~StringIds();

  bool init(size_t capacity = kDefaultCapacity);
  // True when `id` was not seen before (the caller writes the text). When
  // the table is full every unknown id is reported new: duplicates in the
  // spool are harmless, missing strings are not.
  bool claim(uint64_t id);

 private:
  std::atomic<uint64_t>* slots_ = nullptr;
  size_t mask_ = 0;
};

// Collects new strings and writes them as strings chunks, up to kBatch at a
// time. Lives on the caller's stack.
class StringBatch {
 public:
  static constexpr size_t kBatch = 64;
  explicit StringBatch(format::SpoolWriter& spool) : spool_(spool) {}
  void add(uint64_t id, const char* text, size_t length);
  // Writes what is pending. Returns false if a write failed.
  bool flush();

 private:
  format::SpoolWriter& spool_;
  format::StringEntry entries_[kBatch];
  size_t count_ = 0;
  bool ok_ = true;
};

struct WalkResult {
  uint32_t records = 0;
  uint32_t strings = 0;   // pointers replaced by ids
  bool complete = true;   // false: a record of unknown kind or size stopped the walk
  size_t stopped_at = 0;  // offset of that record
};

// Walks `valid` bytes of records, replaces string pointers with ids and adds
// the texts not yet claimed to `batch` (all of them when `emit_all`, which a
// crash handler uses since a claimed string may not have reached the disk).
WalkResult walk_and_rewrite(uint8_t* buffer, size_t valid, StringIds& ids, StringBatch& batch,
                            bool emit_all);

// Longest string copied into the spool; longer ones are cut (and hashed cut).
inline constexpr size_t kMaxStringLength = 32 * 1024;

}  // namespace strata::agent
