#include "analysis/row_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace strata::analysis {
namespace {

struct Merged {
  std::string name;
  std::vector<double> values;
  int64_t count = 0;
};

std::map<std::string, Merged> merge_by_key(std::span<const KeyedRow> rows, size_t measures) {
  std::map<std::string, Merged> out;
  for (const auto& r : rows) {
    auto [it, inserted] = out.try_emplace(r.key);
    Merged& m = it->second;
    if (inserted) {
      m.name = r.name;
      m.values.assign(measures, 0.0);
    }
    for (size_t i = 0; i < measures && i < r.values.size(); ++i) m.values[i] += r.values[i];
    m.count += r.count;
  }
  return out;
}

double sort_weight(const DiffRow& row, const std::vector<size_t>& sort_by) {
  double w = 0;
  for (size_t i : sort_by) {
    if (i < row.a.size()) w += std::fabs(row.b[i] - row.a[i]);
  }
  return w;
}

}  // namespace

RowDiff diff_rows(std::span<const KeyedRow> a, std::span<const KeyedRow> b,
                  const RowDiffOptions& options) {
  const size_t n = options.measures;
  auto ma = merge_by_key(a, n);
  auto mb = merge_by_key(b, n);
  RowDiff out;
  out.total_a.assign(n, 0.0);
  out.total_b.assign(n, 0.0);
  for (const auto& [key, m] : ma) {
    DiffRow row;
    row.key = key;
    row.name = m.name;
    row.a = m.values;
    row.count_a = m.count;
    auto other = mb.find(key);
    if (other == mb.end()) {
      row.change = RowChange::kRemoved;
      row.b.assign(n, 0.0);
    } else {
      row.name = other->second.name;
      row.b = other->second.values;
      row.count_b = other->second.count;
    }
    out.rows.push_back(std::move(row));
  }
  for (const auto& [key, m] : mb) {
    if (ma.count(key)) continue;
    DiffRow row;
    row.key = key;
    row.name = m.name;
    row.change = RowChange::kAdded;
    row.a.assign(n, 0.0);
    row.b = m.values;
    row.count_b = m.count;
    out.rows.push_back(std::move(row));
  }
  for (const auto& row : out.rows) {
    for (size_t i = 0; i < n; ++i) {
      out.total_a[i] += row.a[i];
      out.total_b[i] += row.b[i];
    }
    out.count_a += row.count_a;
    out.count_b += row.count_b;
    out.added += row.change == RowChange::kAdded;
    out.removed += row.change == RowChange::kRemoved;
  }
  std::vector<std::pair<double, size_t>> order;
  for (size_t i = 0; i < out.rows.size(); ++i) {
    order.emplace_back(sort_weight(out.rows[i], options.sort_by), i);
  }
  std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first > y.first;
    const DiffRow& rx = out.rows[x.second];
    const DiffRow& ry = out.rows[y.second];
    const int64_t cx = std::llabs(rx.count_b - rx.count_a);
    const int64_t cy = std::llabs(ry.count_b - ry.count_a);
    if (cx != cy) return cx > cy;
    if (rx.name != ry.name) return rx.name < ry.name;
    return rx.key < ry.key;
  });
  std::vector<DiffRow> sorted;
  sorted.reserve(order.size());
  for (const auto& [weight, i] : order) sorted.push_back(std::move(out.rows[i]));
  out.rows = std::move(sorted);
  out.total_rows = out.rows.size();
  if (options.limit > 0 && out.rows.size() > options.limit) out.rows.resize(options.limit);
  return out;
}

}  // namespace strata::analysis
