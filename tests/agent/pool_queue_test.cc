// BufferPool and BoundedQueue: capped, counted, and safe under contention.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "agent/bounded_queue.h"
#include "agent/buffer_pool.h"

namespace {

using strata::agent::BoundedQueue;
using strata::agent::BufferPool;

TEST(BufferPool, HandsOutAtMostCountAlignedBuffersAndCountsRefusals) {
  BufferPool pool;
  ASSERT_TRUE(pool.init(1000, 4));
  EXPECT_EQ(pool.buffer_size() % BufferPool::kAlignment, 0u);
  EXPECT_GE(pool.buffer_size(), 1000u);
  std::set<uint8_t*> taken;
  for (int i = 0; i < 4; ++i) {
    uint8_t* b = pool.acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
    taken.insert(b);
  }
  EXPECT_EQ(taken.size(), 4u);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.acquire(), nullptr);
  EXPECT_EQ(pool.unavailable(), 2u);
  EXPECT_EQ(pool.in_use(), 4u);
  EXPECT_TRUE(pool.release(*taken.begin()));
  EXPECT_NE(pool.acquire(), nullptr);
  EXPECT_EQ(pool.unavailable(), 2u);
}

TEST(BufferPool, RefusesForeignPointers) {
  BufferPool pool;
  ASSERT_TRUE(pool.init(4096, 2));
  uint8_t other[64];
  EXPECT_FALSE(pool.release(other));
  uint8_t* b = pool.acquire();
  EXPECT_FALSE(pool.release(b + 8));  // not a buffer start
  EXPECT_EQ(pool.foreign(), 2u);
  EXPECT_TRUE(pool.release(b));
  EXPECT_FALSE(pool.init(4096, 2));  // once only
}

TEST(BufferPool, NoBufferIsHeldTwiceUnderContention) {
  BufferPool pool;
  ASSERT_TRUE(pool.init(256, 8));
  std::atomic<int> doubles{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50000; ++i) {
        uint8_t* b = pool.acquire();
        if (b == nullptr) continue;
        // Whoever holds a buffer owns its bytes: a second holder would
        // overwrite the tag between the two checks.
        int tag = t * 1000003 + i;
        std::memcpy(b, &tag, sizeof(tag));
        std::atomic_thread_fence(std::memory_order_seq_cst);
        int seen = 0;
        std::memcpy(&seen, b, sizeof(seen));
        if (seen != tag) doubles.fetch_add(1);
        pool.release(b);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(doubles.load(), 0);
  EXPECT_EQ(pool.in_use(), 0u);
  std::set<uint8_t*> all;
  for (int i = 0; i < 8; ++i) all.insert(pool.acquire());
  EXPECT_EQ(all.size(), 8u);
  EXPECT_EQ(all.count(nullptr), 0u);
  EXPECT_EQ(pool.acquire(), nullptr);
}

TEST(BoundedQueue, IsFifoAndRefusesWhenFull) {
  BoundedQueue<int> queue;
  ASSERT_TRUE(queue.init(3));
  EXPECT_EQ(queue.capacity(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(queue.push(i));
  EXPECT_FALSE(queue.push(99));
  int value = -1;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(queue.pop(&value));
    EXPECT_EQ(value, i);
  }
  EXPECT_FALSE(queue.pop(&value));
}

TEST(BoundedQueue, ManyProducersManyConsumersLoseNothing) {
  BoundedQueue<uint64_t> queue;
  ASSERT_TRUE(queue.init(64));
  constexpr int kProducers = 4, kPerProducer = 100000;
  std::atomic<uint64_t> sum{0}, count{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 1; i <= kPerProducer; ++i) {
        uint64_t v = uint64_t(p) * kPerProducer + i;
        while (!queue.push(v)) std::this_thread::yield();
      }
    });
  }
  std::vector<std::thread> consumers;
  for (int c = 0; c < 3; ++c) {
    consumers.emplace_back([&] {
      uint64_t v;
      for (;;) {
        if (queue.pop(&v)) {
          sum.fetch_add(v);
          count.fetch_add(1);
        } else if (done.load()) {
          if (!queue.pop(&v)) return;
          sum.fetch_add(v);
          count.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  done.store(true);
  for (auto& th : consumers) th.join();
  uint64_t n = uint64_t(kProducers) * kPerProducer;
  EXPECT_EQ(count.load(), n);
  EXPECT_EQ(sum.load(), n * (n + 1) / 2);
}

}  // namespace
