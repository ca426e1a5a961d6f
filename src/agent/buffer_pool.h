// BufferPool: the fixed set of CUPTI activity buffers, carved out of one
// allocation made at init. CUPTI's bufferRequested callback takes a buffer
// here and the drain thread gives it back once it is on disk.
//
// Allocation: init() allocates the slab and the free list; nothing after it
// does. When every buffer is out, acquire() returns nullptr and counts it:
// the pool is a cap on the agent's memory, never grown.
// Threading: acquire and release may run concurrently on any threads, CUPTI's
// callback threads included. acquire is lock-free; release may briefly wait
// for a concurrent acquire to vacate a free-list cell (BoundedQueue::
// push_retry), so it is not for signal handlers. Counters are atomics. init
// and destruction are not thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/bounded_queue.h"

namespace strata::agent {

class BufferPool {
 public:
  // CUPTI needs 8-byte aligned activity buffers (ACTIVITY_RECORD_ALIGNMENT);
  // a cache line keeps buffers of different threads apart.
  static constexpr size_t kAlignment = 64;

  BufferPool() = default;
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();

  // `buffer_size` is rounded up to kAlignment. False when allocation fails,
  // a size is 0, or the pool was already initialized.
  bool init(size_t buffer_size, uint32_t count);

  // A free buffer of buffer_size() bytes, or nullptr (counted in unavailable()).
  uint8_t* acquire();
  // Gives back a buffer from acquire(). Pointers that are not the start of
  // one of this pool's buffers are refused (false) and counted in foreign().
  bool release(uint8_t* buffer);

  size_t buffer_size() const { return buffer_size_; }
  uint32_t count() const { return count_; }
  bool owns(const uint8_t* buffer) const;
  uint64_t unavailable() const { return unavailable_.load(std::memory_order_relaxed); }
  uint64_t foreign() const { return foreign_.load(std::memory_order_relaxed); }
  // Buffers currently handed out (approximate while others run).
  uint32_t in_use() const { return in_use_.load(std::memory_order_relaxed); }

 private:
  uint8_t* slab_ = nullptr;
  size_t buffer_size_ = 0;
  uint32_t count_ = 0;
  BoundedQueue<uint32_t> free_;
  std::atomic<uint64_t> unavailable_{0};
  std::atomic<uint64_t> foreign_{0};
  std::atomic<uint32_t> in_use_{0};
};

}  // namespace strata::agent
