// KernelTable: every kernel name launched in the process, with its launch
// count (the kernels-seen chunk) and the cached answer of the name filter,
// so that a launch of a name seen before costs a hash lookup, not a
// demangle and a regex.
//
// Fixed capacity, chosen at init: kMaxNames names in an open-addressed
// table and their texts in one arena. A name that no longer fits is not
// stored: its launches are counted in overflow_launches() and its ordinal is
// unknown (kUnknownOrdinal). Texts longer than kMaxStoredName are cut for
// the kernels-seen chunk (the full name still decides matching, and the
// hash of the full name tells cut names apart).
//
// Threading: not thread-safe; the kernel profiler calls it under its lock,
// except for the crash-signal path, which reads it as it is.
// Allocation: init() allocates the table and the arena; nothing after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::agent::kernels {

class KernelTable {
 public:
  static constexpr size_t kMaxNames = 4096;            // slots; a power of two
  static constexpr size_t kArenaBytes = 4u << 20;      // texts of all names
  static constexpr size_t kMaxStoredName = 16u << 10;  // well under a 64 KiB chunk
  static constexpr uint64_t kUnknownOrdinal = ~0ull;

  enum class Match : uint8_t { kUnknown, kYes, kNo };

  struct Entry {
    uint64_t hash = 0;  // FNV-1a 64 of the full name
    uint64_t launches = 0;
    uint32_t full_length = 0;
    uint32_t stored_length = 0;
    const char* text = nullptr;  // into the arena; nullptr: free slot
    Match match = Match::kUnknown;
  };

  KernelTable() = default;
  ~KernelTable();
  KernelTable(const KernelTable&) = delete;
  KernelTable& operator=(const KernelTable&) = delete;

  // `max_names` (rounded up to a power of two, at most kMaxNames) and
  // `arena_bytes` are for the tests of a full table.
  bool init(size_t max_names = kMaxNames, size_t arena_bytes = kArenaBytes);

  // Counts one launch of `name`. Returns its entry (nullptr when the table is
  // full) and sets *ordinal to the launches of that name before this one.
  Entry* count_launch(std::string_view name, uint64_t* ordinal);

  uint64_t overflow_launches() const { return overflow_launches_; }
  size_t size() const { return used_; }
  // Calls visit(entry) for each stored name, in slot order.
  template <typename Visit>
  void for_each(Visit&& visit) const {
    for (size_t i = 0; i < capacity_; ++i) {
      if (slots_ != nullptr && __atomic_load_n(&slots_[i].text, __ATOMIC_ACQUIRE) != nullptr) {
        visit(slots_[i]);
      }
    }
  }

 private:
  Entry* slots_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  char* arena_ = nullptr;
  size_t arena_size_ = 0;
  size_t arena_used_ = 0;
  uint64_t overflow_launches_ = 0;
};

}  // namespace strata::agent::kernels
