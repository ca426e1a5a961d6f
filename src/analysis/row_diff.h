// The rows of one layer's summary in two traces side by side: what `strata
// compare` prints per function, op, kernel, API call and memory operation.
// Rows are matched by key; a row only B has is added, one only A has is
// removed. Rows come sorted by how much they changed, largest first.
// Pure functions, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace strata::analysis {

// One row of a layer's summary on one side.
struct KeyedRow {
  std::string key;             // what matches rows across the two sides
  std::string name;            // what is printed
  std::vector<double> values;  // the section's measures (times, bytes), in its order
  int64_t count = 0;           // calls, instances, samples
};

enum class RowChange { kBoth, kAdded, kRemoved };

struct DiffRow {
  std::string key;
  std::string name;  // B's, or A's for a removed row
  RowChange change = RowChange::kBoth;
  std::vector<double> a;  // per measure; 0 where the side lacks the row
  std::vector<double> b;
  int64_t count_a = 0;
  int64_t count_b = 0;
};

struct RowDiff {
  std::vector<DiffRow> rows;  // sorted, then cut to the limit
  size_t total_rows = 0;      // before the limit
  size_t added = 0;           // before the limit
  size_t removed = 0;
  // Sums over all rows, before the limit.
  std::vector<double> total_a;
  std::vector<double> total_b;
  int64_t count_a = 0;
  int64_t count_b = 0;
};

struct RowDiffOptions {
  size_t measures = 1;  // values per row; rows with fewer are padded with 0
  // The measures whose |B - A| summed orders the rows (largest first); ties
  // go to the larger |count change|, then to the name and key, ascending.
  std::vector<size_t> sort_by = {0};
  size_t limit = 0;  // rows kept; 0 = all
};

// Rows with the same key on one side are one row: values and counts add up
// (the name is the first one's).
RowDiff diff_rows(std::span<const KeyedRow> a, std::span<const KeyedRow> b,
                  const RowDiffOptions& options);

}  // namespace strata::analysis
