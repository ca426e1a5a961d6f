// BoundedQueue<T>: a fixed-capacity multi-producer multi-consumer FIFO
// (Dmitry Vyukov's bounded queue: one sequence number per cell).
//
// Allocation: init() allocates the cells once; push/pop never allocate.
// Threading: push and pop may run concurrently on any threads, and inside a
// signal handler: they are made of atomic loads, stores and CAS on lock-free
// atomics only (no locks, no syscalls). A producer preempted between claiming
// and publishing a cell hides later cells from consumers until it finishes;
// pop then reports empty, which callers treat as "try again later".
// A push can also fail while the queue has room: when the cell it needs is
// still being vacated by a pop on another thread (between the pop's claim
// and its release of the cell). push_retry waits that out; it must not be
// used where the popping thread could be the one it interrupted (a signal
// handler), since it would then spin until its bound.
// Destruction frees the cells; it is init/teardown-time and not thread-safe.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>

namespace strata::agent {

template <class T>
class BoundedQueue {
  static_assert(std::is_trivially_copyable_v<T>, "cells are copied without constructors");
  static_assert(std::atomic<size_t>::is_always_lock_free, "signal handlers touch the cells");

 public:
  BoundedQueue() = default;
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;
  ~BoundedQueue() { std::free(cells_); }

  // Capacity is rounded up to a power of two (at least 2). Returns false when
  // the allocation fails or the queue was already initialized.
  bool init(size_t min_capacity) {
    if (cells_ != nullptr) return false;
    size_t capacity = 2;
    while (capacity < min_capacity) capacity <<= 1;
    void* memory = std::calloc(capacity, sizeof(Cell));
    if (memory == nullptr) return false;
    cells_ = static_cast<Cell*>(memory);
    for (size_t i = 0; i < capacity; ++i) {
      new (&cells_[i]) Cell();
      cells_[i].sequence.store(i, std::memory_order_relaxed);
    }
    mask_ = capacity - 1;
    enqueue_.store(0, std::memory_order_relaxed);
    dequeue_.store(0, std::memory_order_release);
    return true;
  }

  size_t capacity() const { return cells_ == nullptr ? 0 : mask_ + 1; }

  // False when the queue is full (or not initialized).
  bool push(const T& value) {
    if (cells_ == nullptr) return false;
    size_t pos = enqueue_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      size_t seq = cell.sequence.load(std::memory_order_acquire);
      intptr_t diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
      if (diff == 0) {
        if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.value = value;
          cell.sequence.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = enqueue_.load(std::memory_order_relaxed);
      }
    }
  }

  // push, retried while a concurrent pop vacates the cell; false only when
  // the queue stayed full for `attempts` tries (yielding between them).
  bool push_retry(const T& value, int attempts = 1 << 16) {
    for (int i = 0; i < attempts; ++i) {
      if (push(value)) return true;
      if (i >= 16) sched_yield();
    }
    return false;
  }

  // False when the queue is empty (or the oldest cell is still being written).
  bool pop(T* out) {
    if (cells_ == nullptr) return false;
    size_t pos = dequeue_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      size_t seq = cell.sequence.load(std::memory_order_acquire);
      intptr_t diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
      if (diff == 0) {
        if (dequeue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          *out = cell.value;
          cell.sequence.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = dequeue_.load(std::memory_order_relaxed);
      }
    }
  }

 private:
  struct Cell {
    std::atomic<size_t> sequence{0};
    T value{};
  };

  Cell* cells_ = nullptr;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> enqueue_{0};
  alignas(64) std::atomic<size_t> dequeue_{0};
};

}  // namespace strata::agent
