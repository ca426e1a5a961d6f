// Offline walking of CUPTI activity buffers as the agent spools them
// (docs/agent.md, Spool contents): records lie back to back, each as long as
// its kind's struct in the CUDA 13.0 headers (cupti_activity.h), and the
// string pointer fields hold the agent's u64 string ids (0 = NULL).
//
// No libcupti: the layouts come from the headers, so the CLI reads spools on
// machines without CUPTI. Threading: none (pure functions). Allocation: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "format/cupti_record_sizes.h"

namespace strata::import {

// A record copied out of the buffer: records are 8-byte aligned in an intact
// spool, but memcpy keeps a damaged one from being a misaligned access.
template <class T>
T load_record(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

// A string id stored in a pointer field at `offset` of a record.
inline uint64_t string_field(const std::byte* record, size_t offset) {
  uint64_t id = 0;
  std::memcpy(&id, record + offset, sizeof(id));
  return id;
}

struct WalkStop {
  uint64_t records = 0;
  bool complete = true;    // false: an unknown kind or a record past the end stopped the walk
  uint32_t stop_kind = 0;  // the kind found there
  size_t stopped_at = 0;   // its offset
  size_t bytes_left = 0;   // bytes of the buffer not walked
};

// Calls visit(kind, record) for each record of `records` in order.
template <class Visit>
WalkStop walk_records(std::span<const std::byte> records, Visit&& visit) {
  WalkStop stop;
  size_t offset = 0;
  const size_t size = records.size();
  while (offset + sizeof(uint32_t) <= size) {
    uint32_t kind = 0;
    std::memcpy(&kind, records.data() + offset, sizeof(kind));
    size_t length = format::cupti_record_size(kind);
    if (length == 0 || length > size - offset) {
      stop.complete = false;
      stop.stop_kind = kind;
      stop.stopped_at = offset;
      stop.bytes_left = size - offset;
      return stop;
    }
    visit(kind, records.data() + offset);
    ++stop.records;
    offset += length;
  }
  return stop;
}

}  // namespace strata::import
