#include "agent/cuda/record_walk.h"

#include <cupti_activity.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <string_view>

#include "agent/proc_info.h"

namespace strata::agent {

uint64_t string_id(const char* text, size_t length) {
  uint64_t id = fnv1a64(text, length);
  return id == 0 ? 1 : id;
}

StringIds::~StringIds() {
  std::free(slots_);
}

bool StringIds::init(size_t capacity) {
  if (slots_ != nullptr) return false;
  size_t size = 2;
  while (size < capacity) size <<= 1;
  void* memory = std::calloc(size, sizeof(std::atomic<uint64_t>));
  if (memory == nullptr) return false;
  slots_ = static_cast<std::atomic<uint64_t>*>(memory);
  for (size_t i = 0; i < size; ++i) new (&slots_[i]) std::atomic<uint64_t>(0);
  mask_ = size - 1;
  return true;
}

bool StringIds::claim(uint64_t id) {
  if (slots_ == nullptr || id == 0) return true;
  // Linear probing, bounded so a full table costs a fixed amount per string.
  constexpr size_t kMaxProbes = 64;
  size_t slot = static_cast<size_t>(id * 0x9E3779B97F4A7C15ull >> 7) & mask_;
  for (size_t probe = 0; probe < kMaxProbes; ++probe) {
    std::atomic<uint64_t>& cell = slots_[(slot + probe) & mask_];
    uint64_t seen = cell.load(std::memory_order_acquire);
    if (seen == id) return false;
    if (seen == 0) {
      uint64_t expected = 0;
      if (cell.compare_exchange_strong(expected, id, std::memory_order_acq_rel)) return true;
      if (expected == id) return false;
    }
  }
  return true;
}

void StringBatch::add(uint64_t id, const char* text, size_t length) {
  if (count_ == kBatch) flush();
  entries_[count_++] = format::StringEntry{id, std::string_view(text, length)};
}

bool StringBatch::flush() {
  if (count_ > 0) {
    if (!spool_.append_strings(std::span<const format::StringEntry>(entries_, count_))) ok_ = false;
    count_ = 0;
  }
  bool ok = ok_;
  ok_ = true;
  return ok;
}

namespace {

// Replaces the pointer at `record + offset` by the id of its text.
void rewrite_pointer(uint8_t* record, size_t offset, StringIds& ids, StringBatch& batch,
                     bool emit_all, WalkResult* result) {
  const char* text = nullptr;
  std::memcpy(&text, record + offset, sizeof(text));
  uint64_t id = 0;
  if (text != nullptr) {
    size_t length = strnlen(text, kMaxStringLength);
    id = string_id(text, length);
    if (ids.claim(id) || emit_all) batch.add(id, text, length);
    ++result->strings;
  }
  static_assert(sizeof(id) == sizeof(text), "ids take the pointer's 8 bytes");
  std::memcpy(record + offset, &id, sizeof(id));
}

}  // namespace

WalkResult walk_and_rewrite(uint8_t* buffer, size_t valid, StringIds& ids, StringBatch& batch,
                            bool emit_all) {
  WalkResult result;
  size_t offset = 0;
  while (offset + sizeof(CUpti_Activity) <= valid) {
    uint32_t kind = 0;
    std::memcpy(&kind, buffer + offset, sizeof(kind));
    size_t size = format::cupti_record_size(kind);
    if (size == 0 || offset + size > valid) {
      result.complete = false;
      result.stopped_at = offset;
      return result;
    }
    uint8_t* record = buffer + offset;
    switch (kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        rewrite_pointer(record, offsetof(CUpti_ActivityKernel10, name), ids, batch, emit_all,
                        &result);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        rewrite_pointer(record, offsetof(CUpti_ActivityDevice5, name), ids, batch, emit_all,
                        &result);
        break;
      case CUPTI_ACTIVITY_KIND_NAME:
        rewrite_pointer(record, offsetof(CUpti_ActivityName, name), ids, batch, emit_all, &result);
        break;
      case CUPTI_ACTIVITY_KIND_MARKER:
        rewrite_pointer(record, offsetof(CUpti_ActivityMarker2, name), ids, batch, emit_all,
                        &result);
        rewrite_pointer(record, offsetof(CUpti_ActivityMarker2, domain), ids, batch, emit_all,
                        &result);
        break;
      default:
        break;
    }
    ++result.records;
    offset += size;
  }
  return result;
}

}  // namespace strata::agent
