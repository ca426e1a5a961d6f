// GPU summaries (analysis/gpu_summary.h).
//
// Every summary groups rows by integer keys first (StringIds ids, copy
// kinds) and resolves names once per group, then merges groups whose names
// are equal, because nsys groups by the name text. Values are bucketed per
// group with a counting sort and each group's median found by selection, so
// 1M rows cost a few passes over flat vectors.
//
// Arithmetic on timestamps wraps instead of overflowing: a hostile file may
// hold any 64-bit values, and garbage numbers are better than undefined
// behaviour.
#include "analysis/gpu_summary.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/global_id.h"

namespace strata::analysis {

using store::GpuTables;
using store::kNoString;

namespace {

int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Dense indices for the distinct int64 keys of a column; small non-negative
// ids (StringIds ids are) go through a flat table instead of a hash map.
class KeyIndex {
 public:
  int32_t operator()(int64_t key) {
    if (key >= 0 && key < kDenseLimit) {
      auto k = static_cast<size_t>(key);
      if (dense_.size() <= k) dense_.resize(std::max(k + 1, dense_.size() * 2), -1);
      int32_t& slot = dense_[k];
      if (slot < 0) {
        slot = static_cast<int32_t>(keys_.size());
        keys_.push_back(key);
      }
      return slot;
    }
    auto [it, inserted] = sparse_.try_emplace(key, static_cast<int32_t>(keys_.size()));
    if (inserted) keys_.push_back(key);
    return it->second;
  }
  const std::vector<int64_t>& keys() const { return keys_; }

 private:
  static constexpr int64_t kDenseLimit = 1 << 20;
  std::vector<int32_t> dense_;
  std::unordered_map<int64_t, int32_t> sparse_;
  std::vector<int64_t> keys_;
};

// Values grouped by a per-row group index (-1 = row left out).
struct Buckets {
  std::vector<size_t> offsets;  // group g: values[offsets[g], offsets[g + 1])
  std::vector<int64_t> values;
  std::span<int64_t> group(size_t g) {
    return {values.data() + offsets[g], offsets[g + 1] - offsets[g]};
  }
};

Buckets bucket(const std::vector<int32_t>& group_of, const std::vector<int64_t>& value,
               size_t groups) {
  Buckets b;
  b.offsets.assign(groups + 1, 0);
  for (int32_t g : group_of) {
    if (g >= 0) ++b.offsets[static_cast<size_t>(g) + 1];
  }
  for (size_t g = 0; g < groups; ++g) b.offsets[g + 1] += b.offsets[g];
  b.values.resize(b.offsets[groups]);
  std::vector<size_t> next(b.offsets.begin(), b.offsets.end() - 1);
  for (size_t i = 0; i < group_of.size(); ++i) {
    if (group_of[i] >= 0) b.values[next[static_cast<size_t>(group_of[i])]++] = value[i];
  }
  return b;
}

// Groups of named rows, merged by name: names[g] is group g's name.
struct NamedGroups {
  std::vector<int32_t> group_of;  // per row
  std::vector<std::string> names;
  std::unordered_map<std::string, int32_t> by_name;

  int32_t group_for(const std::string& name) {
    auto [it, inserted] = by_name.try_emplace(name, static_cast<int32_t>(names.size()));
    if (inserted) names.push_back(name);
    return it->second;
  }
};

std::string unknown_string(int64_t id) {
  return "[unknown StringIds id " + std::to_string(id) + "]";
}

std::string string_or_unknown(const GpuTables& t, int64_t id) {
  const std::string* s = t.string(id);
  return s != nullptr ? *s : unknown_string(id);
}


// Time (%) of each row over the listed rows' total.
void set_percentages(std::vector<SummaryRow>& rows) {
  int64_t grand = 0;
  for (const auto& r : rows) grand = wrap_add(grand, r.stats.total);
  for (auto& r : rows) {
    r.time_percent =
        grand == 0 ? 0.0 : static_cast<double>(r.stats.total) * 100.0 / static_cast<double>(grand);
  }
}

std::vector<SummaryRow> summary_rows(Buckets& buckets, const std::vector<std::string>& names) {
  std::vector<SummaryRow> rows;
  for (size_t g = 0; g < names.size(); ++g) {
    auto values = buckets.group(g);
    if (values.empty()) continue;
    SummaryRow row;
    row.stats = int_stats(values);
    row.name = names[g];
    rows.push_back(std::move(row));
  }
  set_percentages(rows);
  return rows;
}

std::vector<int64_t> durations(const std::vector<int64_t>& start, const std::vector<int64_t>& end) {
  std::vector<int64_t> out(start.size());
  for (size_t i = 0; i < start.size(); ++i) out[i] = wrap_sub(end[i], start[i]);
  return out;
}

constexpr const char* kNoStringIds = "file does not contain StringIds table.";
constexpr const char* kNoNvtx = "does not contain NV Tools Extension (NVTX) data.";
constexpr const char* kNoKernels = "does not contain CUDA kernel data.";

// Why a summary has no rows, in nsys's order of checks: StringIds first,
// then each table it reads (present, and nsys's words when absent); empty
// when every one is there.
std::string missing_table(const GpuTables& t,
                          std::initializer_list<std::pair<bool, const char*>> tables) {
  if (!t.has_string_ids) return kNoStringIds;
  for (const auto& [present, why] : tables) {
    if (!present) return why;
  }
  return {};
}

// The process bits of a serialized GlobalId (nsys: globalTid & 0xFFFFFFFFFF000000).
int64_t process_bits(int64_t gid) {
  return global_id::process_of(gid);
}

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const {
    uint64_t h = static_cast<uint64_t>(p.first) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(
        h ^ (static_cast<uint64_t>(p.second) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2)));
  }
};

// The launch call of each kernel: the runtime row with the same
// correlationId in the same process, or -1. Where several calls share a key
// (damaged data) the first one wins.
std::vector<int64_t> match_launches(const GpuTables& t) {
  const auto& r = t.runtime;
  const auto& k = t.kernels;
  // Loaded without GpuLoadOptions::kernel_links: nothing can be matched.
  if (k.correlation_id.size() != k.size()) return std::vector<int64_t>(k.size(), -1);
  std::unordered_map<std::pair<int64_t, int64_t>, int64_t, PairHash> by_key;
  by_key.reserve(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    by_key.try_emplace({process_bits(k.global_pid[i]), k.correlation_id[i]}, -1);
  }
  for (size_t i = 0; i < r.size(); ++i) {
    auto it = by_key.find({process_bits(r.global_tid[i]), r.correlation_id[i]});
    if (it != by_key.end() && it->second < 0) it->second = static_cast<int64_t>(i);
  }
  std::vector<int64_t> out(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    out[i] = by_key.find({process_bits(k.global_pid[i]), k.correlation_id[i]})->second;
  }
  return out;
}

bool is_push_pop(int32_t type) {
  return type == store::kNvtxPushPopRange || type == store::kNvtxtPushPopRange;
}
bool is_start_end(int32_t type) {
  return type == store::kNvtxStartEndRange || type == store::kNvtxtStartEndRange;
}

// The text of NVTX row i: its registered string, else its explicit text.
std::string nvtx_text(const GpuTables& t, size_t i) {
  const auto& n = t.nvtx;
  if (n.text_id[i] != kNoString) {
    if (const std::string* s = t.string(n.text_id[i])) return *s;
  }
  return n.text_index[i] >= 0 ? n.texts[static_cast<size_t>(n.text_index[i])] : std::string();
}

// Names of the NVTX range rows (other rows get -1): "<domain>:<text>" as
// nsys's scripts build them, or, for the op table (`bare_default_domain`),
// just the text where the range is in the default domain.
NamedGroups nvtx_range_names(const GpuTables& t, bool bare_default_domain) {
  const auto& n = t.nvtx;
  std::map<std::pair<int64_t, int64_t>, std::string> domains;
  for (const auto& [key, row] : nvtx_domain_rows(n)) domains.emplace(key, nvtx_text(t, row));
  NamedGroups out;
  out.group_of.assign(n.size(), -1);
  // Registered strings repeat: resolve each (domain, textId) pair once.
  std::map<std::tuple<int64_t, int64_t, int64_t>, int32_t> registered;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!is_push_pop(n.event_type[i]) && !is_start_end(n.event_type[i])) continue;
    auto key = std::make_tuple(n.domain_id[i], process_bits(n.global_tid[i]), n.text_id[i]);
    bool cacheable = n.text_id[i] != kNoString && t.string(n.text_id[i]) != nullptr;
    if (cacheable) {
      if (auto it = registered.find(key); it != registered.end()) {
        out.group_of[i] = it->second;
        continue;
      }
    }
    auto d = domains.find({n.domain_id[i], process_bits(n.global_tid[i])});
    std::string domain = d == domains.end() ? std::string() : d->second;
    std::string text = nvtx_text(t, i);
    std::string name = bare_default_domain && domain.empty() ? text : domain + ":" + text;
    int32_t g = out.group_for(name);
    out.group_of[i] = g;
    if (cacheable) registered.emplace(key, g);
  }
  return out;
}

int64_t nvtx_duration(const GpuTables& t, size_t i) {
  const auto& n = t.nvtx;
  int64_t end = n.end[i] == store::NvtxColumns::kNoEnd ? n.max_timestamp : n.end[i];
  return wrap_sub(end, n.start[i]);
}

void sort_by_total_then_name(std::vector<SummaryRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const SummaryRow& a, const SummaryRow& b) {
    if (a.stats.total != b.stats.total) return a.stats.total > b.stats.total;
    if (a.name != b.name) return a.name < b.name;
    return a.style < b.style;
  });
}

}  // namespace

// nsys's CASE substr(name, -6, 2) WHEN '_v' THEN substr(name, 1, length(name) - 6):
// SQLite counts characters, so count UTF-8 lead bytes from the end.
std::string strip_version_suffix(const std::string& name) {
  size_t pos = name.size();
  int chars = 0;
  while (pos > 0 && chars < 6) {
    --pos;
    while (pos > 0 && (static_cast<unsigned char>(name[pos]) & 0xC0) == 0x80) --pos;
    ++chars;
  }
  if (chars < 6 || name.compare(pos, 2, "_v") != 0) return name;
  return name.substr(0, pos);
}

std::map<std::pair<int64_t, int64_t>, size_t> nvtx_domain_rows(const store::NvtxColumns& n) {
  std::map<std::pair<int64_t, int64_t>, size_t> out;
  for (size_t i = 0; i < n.size(); ++i) {
    if (n.event_type[i] != store::kNvtxDomainCreate) continue;
    auto [it, added] = out.try_emplace({n.domain_id[i], process_bits(n.global_tid[i])}, i);
    if (!added && n.start[i] < n.start[it->second]) it->second = i;
  }
  return out;
}

IntStats int_stats(std::span<int64_t> values) {
  IntStats s;
  const size_t n = values.size();
  s.count = static_cast<int64_t>(n);
  s.min = values[0];
  s.max = values[0];
  uint64_t sum = 0;
  for (int64_t v : values) {
    sum += static_cast<uint64_t>(v);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  s.total = static_cast<int64_t>(sum);
  s.mean = static_cast<double>(s.total) / static_cast<double>(n);
  if (n > 1) {
    double sq = 0;
    for (int64_t v : values) {
      double d = static_cast<double>(v) - s.mean;
      sq += d * d;
    }
    s.stddev = std::sqrt(sq / static_cast<double>(n - 1));
  }
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), mid, values.end());
  double upper = static_cast<double>(*mid);
  if (n % 2 == 1) {
    s.median = upper;
  } else {
    double lower = static_cast<double>(*std::max_element(values.begin(), mid));
    s.median = (lower + upper) / 2.0;
  }
  return s;
}

double round1(double value) {
  if (!std::isfinite(value)) return value;
  double scaled = value * 10.0;
  double rounded = std::round(scaled);  // half away from zero
  // A product that lands exactly on .5 may only look like a tie: the exact
  // value decides (SQLite rounds the exact binary value).
  if (std::fabs(scaled - std::trunc(scaled)) == 0.5) {
    double error = std::fma(value, 10.0, -scaled);
    if (error != 0)
      rounded = (error > 0) == (scaled > 0) ? rounded : rounded - std::copysign(1.0, scaled);
  }
  return rounded / 10.0;
}

GpuSummary cuda_api_sum(const GpuTables& t) {
  GpuSummary s;
  s.missing = missing_table(t, {{t.has_runtime, "does not contain CUDA trace data."}});
  if (!s.missing.empty()) return s;
  const auto& r = t.runtime;
  KeyIndex ids;
  std::vector<int32_t> group_of(r.size());
  for (size_t i = 0; i < r.size(); ++i) group_of[i] = ids(r.name_id[i]);
  // Groups stay per nameId, as nsys's GROUP BY nameId; names are resolved after.
  std::vector<std::pair<int64_t, int32_t>> order;
  for (size_t g = 0; g < ids.keys().size(); ++g) order.emplace_back(ids.keys()[g], g);
  std::sort(order.begin(), order.end());
  std::vector<int32_t> sorted_group(order.size());
  std::vector<std::string> names;
  for (size_t j = 0; j < order.size(); ++j) {
    sorted_group[static_cast<size_t>(order[j].second)] = static_cast<int32_t>(j);
    names.push_back(strip_version_suffix(string_or_unknown(t, order[j].first)));
  }
  for (auto& g : group_of) g = sorted_group[static_cast<size_t>(g)];
  Buckets b = bucket(group_of, durations(r.start, r.end), names.size());
  s.rows = summary_rows(b, names);
  std::stable_sort(s.rows.begin(), s.rows.end(), [](const SummaryRow& a, const SummaryRow& b) {
    return a.stats.total > b.stats.total;
  });
  return s;
}

GpuSummary cuda_gpu_kern_sum(const GpuTables& t) {
  GpuSummary s;
  s.missing = missing_table(t, {{t.has_kernels, kNoKernels}});
  if (!s.missing.empty()) return s;
  const auto& k = t.kernels;
  KeyIndex ids;
  std::vector<int32_t> group_of(k.size());
  for (size_t i = 0; i < k.size(); ++i) group_of[i] = ids(k.name_id[i]);
  NamedGroups named;
  std::vector<int32_t> merged(ids.keys().size());
  for (size_t g = 0; g < ids.keys().size(); ++g) {
    merged[g] = named.group_for(string_or_unknown(t, ids.keys()[g]));
  }
  for (auto& g : group_of) g = merged[static_cast<size_t>(g)];
  Buckets b = bucket(group_of, durations(k.start, k.end), named.names.size());
  s.rows = summary_rows(b, named.names);
  std::sort(s.rows.begin(), s.rows.end(), [](const SummaryRow& a, const SummaryRow& b) {
    if (a.stats.total != b.stats.total) return a.stats.total > b.stats.total;
    if (a.stats.count != b.stats.count) return a.stats.count < b.stats.count;
    return a.name < b.name;
  });
  return s;
}

namespace {

// The memory operations of both tables as one list of (group, value) rows.
GpuSummary mem_summary(const GpuTables& t, bool by_size) {
  GpuSummary s;
  if (t.has_memcpy && !t.has_memcpy_enum) {
    s.missing = "does not contain ENUM_CUDA_MEMCPY_OPER table.";
    return s;
  }
  if (!t.has_memcpy && !t.has_memset) {
    s.missing = "does not contain GPU memory data.";
    return s;
  }
  NamedGroups named;
  std::vector<int32_t> group_of;
  std::vector<int64_t> values;
  std::unordered_map<int64_t, int32_t> kind_group;
  const auto& c = t.memcpy;
  for (size_t i = 0; i < c.size(); ++i) {
    auto it = kind_group.find(c.copy_kind[i]);
    if (it == kind_group.end()) {
      auto label = t.memcpy_labels.find(c.copy_kind[i]);
      int32_t g = label == t.memcpy_labels.end()
                      ? -1
                      : named.group_for("[CUDA memcpy " + label->second + "]");
      it = kind_group.emplace(c.copy_kind[i], g).first;
    }
    if (it->second < 0) {
      ++s.rows_left_out;
      continue;
    }
    group_of.push_back(it->second);
    values.push_back(by_size ? c.bytes[i] : wrap_sub(c.end[i], c.start[i]));
  }
  const auto& m = t.memset;
  if (m.size() > 0) {
    int32_t g = named.group_for("[CUDA memset]");
    for (size_t i = 0; i < m.size(); ++i) {
      group_of.push_back(g);
      values.push_back(by_size ? m.bytes[i] : wrap_sub(m.end[i], m.start[i]));
    }
  }
  Buckets b = bucket(group_of, values, named.names.size());
  s.rows = summary_rows(b, named.names);
  sort_by_total_then_name(s.rows);
  return s;
}

}  // namespace

GpuSummary cuda_gpu_mem_time_sum(const GpuTables& t) {
  return mem_summary(t, false);
}
GpuSummary cuda_gpu_mem_size_sum(const GpuTables& t) {
  return mem_summary(t, true);
}

GpuSummary nvtx_sum(const GpuTables& t) {
  GpuSummary s;
  s.missing = missing_table(t, {{t.has_nvtx, kNoNvtx}});
  if (!s.missing.empty()) return s;
  const auto& n = t.nvtx;
  NamedGroups named = nvtx_range_names(t, false);
  // Style doubles the groups: group g of name x style = 2g (PushPop) or 2g+1.
  std::vector<int32_t> group_of(n.size(), -1);
  std::vector<int64_t> values(n.size(), 0);
  for (size_t i = 0; i < n.size(); ++i) {
    if (named.group_of[i] < 0) continue;
    group_of[i] = named.group_of[i] * 2 + (is_push_pop(n.event_type[i]) ? 0 : 1);
    values[i] = nvtx_duration(t, i);
  }
  std::vector<std::string> names;
  for (const auto& name : named.names) {
    names.push_back(name);
    names.push_back(name);
  }
  Buckets b = bucket(group_of, values, names.size());
  for (size_t g = 0; g < names.size(); ++g) {
    auto v = b.group(g);
    if (v.empty()) continue;
    SummaryRow row;
    row.stats = int_stats(v);
    row.name = names[g];
    row.style = g % 2 == 0 ? "PushPop" : "StartEnd";
    s.rows.push_back(std::move(row));
  }
  set_percentages(s.rows);
  sort_by_total_then_name(s.rows);
  return s;
}

KernExecSummary cuda_kern_exec_sum(const GpuTables& t) {
  KernExecSummary s;
  s.missing = missing_table(
      t, {{t.has_kernels, kNoKernels}, {t.has_runtime, "does not contain CUDA API data."}});
  if (!s.missing.empty()) return s;
  const auto& k = t.kernels;
  const auto& r = t.runtime;
  std::vector<int64_t> launch = match_launches(t);

  using FinalKey = std::tuple<int64_t, int64_t, int64_t, std::string, std::string>;
  std::map<FinalKey, int32_t> final_groups;
  std::vector<FinalKey> keys;
  // Raw key (process/thread id, device, API nameId, kernel nameId) -> group.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, int32_t> raw_groups;
  std::vector<int32_t> group_of(k.size(), -1), queue_group_of(k.size(), -1);
  std::vector<int64_t> total(k.size()), api(k.size()), queue(k.size()), kern(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    if (launch[i] < 0) {
      ++s.kernels_unmatched;
      continue;
    }
    auto j = static_cast<size_t>(launch[i]);
    int64_t gtid = r.global_tid[j];
    auto raw = std::make_tuple(gtid, k.device_id[i], r.name_id[j], k.name_id[i]);
    auto it = raw_groups.find(raw);
    if (it == raw_groups.end()) {
      FinalKey key{global_id::pid_of(gtid), global_id::tid_of(gtid), k.device_id[i],
                   strip_version_suffix(string_or_unknown(t, r.name_id[j])),
                   string_or_unknown(t, k.name_id[i])};
      auto [f, inserted] = final_groups.try_emplace(key, static_cast<int32_t>(keys.size()));
      if (inserted) keys.push_back(key);
      it = raw_groups.emplace(raw, f->second).first;
    }
    group_of[i] = it->second;
    api[i] = wrap_sub(r.end[j], r.start[j]);
    int64_t q = wrap_sub(k.start[i], r.end[j]);
    if (q >= 0) {
      queue_group_of[i] = it->second;
      queue[i] = q;
    }
    kern[i] = wrap_sub(k.end[i], k.start[i]);
    total[i] = wrap_sub(std::max(r.end[j], k.end[i]), r.start[j]);
  }
  Buckets bt = bucket(group_of, total, keys.size());
  Buckets ba = bucket(group_of, api, keys.size());
  Buckets bq = bucket(queue_group_of, queue, keys.size());
  Buckets bk = bucket(group_of, kern, keys.size());
  for (size_t g = 0; g < keys.size(); ++g) {
    KernExecRow row;
    std::tie(row.pid, row.tid, row.device_id, row.api_name, row.kernel_name) = keys[g];
    row.total = int_stats(bt.group(g));
    row.api = int_stats(ba.group(g));
    row.kernel = int_stats(bk.group(g));
    row.count = row.total.count;
    if (auto q = bq.group(g); !q.empty()) row.queue = int_stats(q);
    row.queue_count = row.queue.count;
    s.rows.push_back(std::move(row));
  }
  // nsys orders by the rounded TAvg column; the group key breaks ties.
  std::sort(s.rows.begin(), s.rows.end(), [](const KernExecRow& a, const KernExecRow& b) {
    double ta = round1(a.total.mean), tb = round1(b.total.mean);
    if (ta != tb) return ta > tb;
    return std::tie(a.pid, a.tid, a.device_id, a.api_name, a.kernel_name) <
           std::tie(b.pid, b.tid, b.device_id, b.api_name, b.kernel_name);
  });
  return s;
}

OpTable op_table(const GpuTables& t, const OpTableOptions& options) {
  OpTable out;
  if (!t.has_nvtx) {
    out.missing = kNoNvtx;
    return out;
  }
  const auto& n = t.nvtx;
  NamedGroups named = nvtx_range_names(t, true);

  // Push/pop ranges per thread, outer before inner.
  std::unordered_map<int64_t, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < n.size(); ++i) {
    if (named.group_of[i] >= 0 && is_push_pop(n.event_type[i])) {
      by_thread[n.global_tid[i]].push_back(i);
    }
  }
  std::vector<int64_t> range_end(n.size()), parent(n.size(), -1);
  std::vector<int64_t> self_cpu(n.size(), 0), self_gpu(n.size(), 0), gpu_total(n.size(), 0);
  for (auto& [tid, ranges] : by_thread) {
    for (size_t i : ranges) range_end[i] = wrap_add(n.start[i], nvtx_duration(t, i));
    std::sort(ranges.begin(), ranges.end(), [&](size_t a, size_t b) {
      if (n.start[a] != n.start[b]) return n.start[a] < n.start[b];
      if (range_end[a] != range_end[b]) return range_end[a] > range_end[b];
      return a < b;
    });
    std::vector<size_t> stack;
    for (size_t i : ranges) {
      while (!stack.empty() && range_end[i] > range_end[stack.back()]) stack.pop_back();
      int64_t duration = wrap_sub(range_end[i], n.start[i]);
      self_cpu[i] = wrap_add(self_cpu[i], duration);
      if (!stack.empty()) {
        parent[i] = static_cast<int64_t>(stack.back());
        self_cpu[stack.back()] = wrap_sub(self_cpu[stack.back()], duration);
      }
      stack.push_back(i);
    }
  }

  // Kernels into the innermost range around their launch call's start.
  const auto& k = t.kernels;
  std::vector<int64_t> launch = match_launches(t);
  for (size_t i = 0; i < k.size(); ++i) {
    int64_t duration = wrap_sub(k.end[i], k.start[i]);
    out.self_gpu_total_ns = wrap_add(out.self_gpu_total_ns, duration);
    int64_t range = -1;
    if (launch[i] >= 0) {
      auto j = static_cast<size_t>(launch[i]);
      auto thread = by_thread.find(t.runtime.global_tid[j]);
      if (thread != by_thread.end()) {
        const auto& ranges = thread->second;
        int64_t when = t.runtime.start[j];
        auto after = std::upper_bound(ranges.begin(), ranges.end(), when,
                                      [&](int64_t v, size_t r) { return v < n.start[r]; });
        if (after != ranges.begin()) range = static_cast<int64_t>(*(after - 1));
        while (range >= 0 && range_end[static_cast<size_t>(range)] < when) {
          range = parent[static_cast<size_t>(range)];
        }
      }
    }
    if (range < 0) {
      ++out.kernels_outside_ranges;
      continue;
    }
    self_gpu[static_cast<size_t>(range)] += duration;
    for (int64_t r = range; r >= 0; r = parent[static_cast<size_t>(r)]) {
      gpu_total[static_cast<size_t>(r)] += duration;
    }
  }

  std::vector<OpRow> rows(named.names.size());
  for (size_t g = 0; g < rows.size(); ++g) rows[g].name = named.names[g];
  for (const auto& [tid, ranges] : by_thread) {
    for (size_t i : ranges) {
      OpRow& row = rows[static_cast<size_t>(named.group_of[i])];
      ++row.calls;
      row.cpu_total_ns = wrap_add(row.cpu_total_ns, wrap_sub(range_end[i], n.start[i]));
      row.self_cpu_ns = wrap_add(row.self_cpu_ns, self_cpu[i]);
      row.self_gpu_ns = wrap_add(row.self_gpu_ns, self_gpu[i]);
      row.gpu_total_ns = wrap_add(row.gpu_total_ns, gpu_total[i]);
      out.self_cpu_total_ns = wrap_add(out.self_cpu_total_ns, self_cpu[i]);
    }
  }
  std::erase_if(rows, [](const OpRow& r) { return r.calls == 0; });
  auto key = [&](const OpRow& r) {
    switch (options.sort) {
      case OpSort::kGpuTotal:
        return r.gpu_total_ns;
      case OpSort::kSelfCpu:
        return r.self_cpu_ns;
      case OpSort::kCpuTotal:
        return r.cpu_total_ns;
      case OpSort::kCalls:
        return r.calls;
      case OpSort::kSelfGpu:
        break;
    }
    return r.self_gpu_ns;
  };
  std::sort(rows.begin(), rows.end(), [&](const OpRow& a, const OpRow& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    if (a.cpu_total_ns != b.cpu_total_ns) return a.cpu_total_ns > b.cpu_total_ns;
    return a.name < b.name;
  });
  if (options.limit > 0 && rows.size() > options.limit) rows.resize(options.limit);
  out.rows = std::move(rows);
  return out;
}

}  // namespace strata::analysis
