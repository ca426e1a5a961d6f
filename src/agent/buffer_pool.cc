#include "agent/buffer_pool.h"

#include <cstdlib>

namespace strata::agent {

BufferPool::~BufferPool() {
  std::free(slab_);
}

bool BufferPool::init(size_t buffer_size, uint32_t count) {
  if (slab_ != nullptr || buffer_size == 0 || count == 0) return false;
  size_t size = (buffer_size + kAlignment - 1) & ~(kAlignment - 1);
  if (size / kAlignment > SIZE_MAX / kAlignment / count) return false;
  if (!free_.init(count)) return false;
  void* slab = std::aligned_alloc(kAlignment, size * count);
  if (slab == nullptr) return false;
  slab_ = static_cast<uint8_t*>(slab);
  buffer_size_ = size;
  count_ = count;
  for (uint32_t i = 0; i < count; ++i) free_.push(i);
  return true;
}

uint8_t* BufferPool::acquire() {
  uint32_t index = 0;
  if (!free_.pop(&index)) {
    unavailable_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  in_use_.fetch_add(1, std::memory_order_relaxed);
  return slab_ + size_t{index} * buffer_size_;
}

bool BufferPool::owns(const uint8_t* buffer) const {
  if (slab_ == nullptr || buffer < slab_) return false;
  size_t offset = static_cast<size_t>(buffer - slab_);
  return offset < buffer_size_ * count_ && offset % buffer_size_ == 0;
}

bool BufferPool::release(uint8_t* buffer) {
  if (!owns(buffer)) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  uint32_t index = static_cast<uint32_t>(static_cast<size_t>(buffer - slab_) / buffer_size_);
  // The free list has a cell for every buffer, so this only waits out a
  // concurrent acquire that is vacating the cell.
  if (!free_.push_retry(index)) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

}  // namespace strata::agent
