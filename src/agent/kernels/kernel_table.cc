#include "agent/kernels/kernel_table.h"

#include <cstdlib>
#include <cstring>

namespace strata::agent::kernels {

namespace {

uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

KernelTable::~KernelTable() {
  std::free(slots_);
  std::free(arena_);
}

bool KernelTable::init(size_t max_names, size_t arena_bytes) {
  size_t capacity = 1;
  while (capacity < max_names && capacity < kMaxNames) capacity <<= 1;
  slots_ = static_cast<Entry*>(std::calloc(capacity, sizeof(Entry)));
  arena_ = static_cast<char*>(std::malloc(arena_bytes));
  if (slots_ == nullptr || arena_ == nullptr) {
    std::free(slots_);
    std::free(arena_);
    slots_ = nullptr;
    arena_ = nullptr;
    return false;
  }
  capacity_ = capacity;
  arena_size_ = arena_bytes;
  return true;
}

KernelTable::Entry* KernelTable::count_launch(std::string_view name, uint64_t* ordinal) {
  *ordinal = kUnknownOrdinal;
  if (slots_ == nullptr) {
    ++overflow_launches_;
    return nullptr;
  }
  const uint64_t hash = fnv1a(name);
  const size_t stored = name.size() < kMaxStoredName ? name.size() : kMaxStoredName;
  const size_t mask = capacity_ - 1;
  for (size_t probe = 0; probe < capacity_; ++probe) {
    Entry& entry = slots_[(hash + probe) & mask];
    if (entry.text == nullptr) {
      // A new name. Keep a quarter of the slots free so probes stay short
      // and a lookup of an absent name always ends.
      if ((used_ + 1) * 4 > capacity_ * 3 || arena_used_ + stored > arena_size_) {
        ++overflow_launches_;
        return nullptr;
      }
      char* text = arena_ + arena_used_;
      std::memcpy(text, name.data(), stored);
      arena_used_ += stored;
      entry.hash = hash;
      entry.full_length = static_cast<uint32_t>(name.size());
      entry.stored_length = static_cast<uint32_t>(stored);
      entry.launches = 1;
      entry.match = Match::kUnknown;
      // Published last, with release order: the crash path reads slots
      // without the lock (for_each's acquire load pairs with it).
      __atomic_store_n(&entry.text, text, __ATOMIC_RELEASE);
      ++used_;
      *ordinal = 0;
      return &entry;
    }
    if (entry.hash == hash && entry.full_length == name.size() &&
        std::memcmp(entry.text, name.data(), entry.stored_length) == 0) {
      *ordinal = entry.launches++;
      return &entry;
    }
  }
  ++overflow_launches_;
  return nullptr;
}

}  // namespace strata::agent::kernels
