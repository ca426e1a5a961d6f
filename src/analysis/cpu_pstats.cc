#include "analysis/cpu_pstats.h"

#include <re2/re2.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace strata::analysis {
namespace {

constexpr double kNsPerS = 1e9;
constexpr int32_t kAllThreads = -1;

struct Acc {
  uint64_t ncalls = 0;
  uint64_t primitive = 0;
  uint64_t self_samples = 0;
  uint64_t cum_samples = 0;
  int64_t self_ns = 0;
  int64_t cum_ns = 0;
};

struct ThreadTotal {
  int32_t pid = 0;
  uint64_t samples = 0;
  uint64_t calls = 0;
  int64_t ns = 0;
};

// One pass over the profile that every analysis here reads from.
struct Aggregate {
  FunctionIndex index;
  std::map<std::pair<int32_t, uint32_t>, Acc> rows;  // (tid or kAllThreads, function)
  std::map<int32_t, ThreadTotal> threads;
  uint64_t samples = 0;
  int64_t total_ns = 0;
  uint64_t calls = 0;
  uint64_t primitive = 0;
  uint64_t closed_at_end = 0;
  uint64_t closed_by_outer_exit = 0;
  uint64_t unmatched_exits = 0;
  uint64_t reordered_times = 0;
};

void add_samples(const Profile& p, bool per_thread, const std::vector<int32_t>& tids,
                 Aggregate& agg) {
  // seen[f] == sample number when f was already counted in this sample's
  // cumulative time: recursion counts once per sample.
  std::vector<uint64_t> seen(agg.index.functions.size(), std::numeric_limits<uint64_t>::max());
  uint64_t n = 0;
  for (const Sample& s : p.samples) {
    if (!thread_wanted(tids, s.tid)) continue;
    int64_t w = sample_weight_ns(p, s);
    ++agg.samples;
    agg.total_ns += w;
    ThreadTotal& t = agg.threads[s.tid];
    t.pid = s.pid;
    ++t.samples;
    t.ns += w;
    int32_t key_tid = per_thread ? s.tid : kAllThreads;
    for (size_t i = 0; i < s.stack.size(); ++i) {
      if (s.stack[i] >= agg.index.of_frame.size()) continue;
      uint32_t f = agg.index.of_frame[s.stack[i]];
      Acc& a = agg.rows[{key_tid, f}];
      if (i == 0) {
        ++a.self_samples;
        ++a.ncalls;
        ++a.primitive;
        a.self_ns += w;
      }
      if (seen[f] != n) {
        seen[f] = n;
        ++a.cum_samples;
        a.cum_ns += w;
      }
    }
    ++n;
  }
}

void add_calls(const Profile& p, bool per_thread, const std::vector<int32_t>& tids,
               Aggregate& agg) {
  for (const ThreadCalls& tc : p.calls) {
    if (!thread_wanted(tids, tc.tid)) continue;
    BalancedCalls b = balance_events(tc.events);
    agg.closed_at_end += b.closed_at_end;
    agg.closed_by_outer_exit += b.closed_by_outer_exit;
    agg.unmatched_exits += b.unmatched_exits;
    agg.reordered_times += b.reordered_times;
    ThreadTotal& t = agg.threads[tc.tid];
    t.pid = tc.pid;
    int32_t key_tid = per_thread ? tc.tid : kAllThreads;
    for_each_returned_call(b, agg.index, [&](const ReturnedCall& call) {
      Acc& a = agg.rows[{key_tid, call.function}];
      ++a.ncalls;
      a.self_ns += call.self_ns;
      ++t.calls;
      t.ns += call.self_ns;
      ++agg.calls;
      agg.total_ns += call.self_ns;
      // cProfile: only the outermost activation adds to cumtime.
      if (call.primitive) {
        ++a.primitive;
        ++agg.primitive;
        a.cum_ns += call.duration_ns;
      }
    });
  }
}

Aggregate aggregate(const Profile& p, bool per_thread, const std::vector<int32_t>& tids) {
  Aggregate agg;
  agg.index = index_functions(p.frames);
  if (is_sampled(p.mode)) {
    add_samples(p, per_thread, tids, agg);
  } else {
    add_calls(p, per_thread, tids, agg);
  }
  return agg;
}

std::optional<double> ratio(double num, uint64_t den) {
  if (den == 0) return std::nullopt;
  return num / static_cast<double>(den);
}

// -1, 0 or 1 as a sorts before, equal to or after b by one key.
int compare_by(const CpuRow& a, const CpuRow& b, CpuSort key, bool sampled,
               const std::vector<Function>& functions) {
  auto descending = [](auto x, auto y) { return x > y ? -1 : (x < y ? 1 : 0); };
  auto ascending = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
  const Function& fa = functions[a.function];
  const Function& fb = functions[b.function];
  switch (key) {
    case CpuSort::kNcalls:
      return descending(a.ncalls, b.ncalls);
    case CpuSort::kPcalls:
      return descending(a.primitive_calls, b.primitive_calls);
    case CpuSort::kTottime:
      return descending(a.tottime_s, b.tottime_s);
    case CpuSort::kCumtime:
      return descending(a.cumtime_s, b.cumtime_s);
    case CpuSort::kFile:
      return ascending(fa.file_or_module(), fb.file_or_module());
    case CpuSort::kLine:
      return ascending(fa.line, fb.line);
    case CpuSort::kName:
      return ascending(fa.name, fb.name);
    case CpuSort::kNfl:
      if (int c = compare_by(a, b, CpuSort::kName, sampled, functions)) return c;
      if (int c = compare_by(a, b, CpuSort::kFile, sampled, functions)) return c;
      return compare_by(a, b, CpuSort::kLine, sampled, functions);
    case CpuSort::kStdname:
      return ascending(a.label, b.label);
    case CpuSort::kSamples:
      return sampled ? descending(a.cum_samples, b.cum_samples) : descending(a.ncalls, b.ncalls);
  }
  return 0;
}

// Total order: the chosen keys, then label, then tid, so output never
// depends on map or hash order.
bool row_less(const CpuRow& a, const CpuRow& b, const CpuSortKeys& keys, bool sampled,
              const std::vector<Function>& functions) {
  for (CpuSort key : keys) {
    if (int c = compare_by(a, b, key, sampled, functions)) return c < 0;
  }
  if (a.label != b.label) return a.label < b.label;
  return a.tid < b.tid;
}

// RE2, not std::regex: its matching time and stack use are linear in the
// label, where std::regex recursed per character and overflowed the stack
// on names of 20-50k characters (issue 21). Latin-1 keeps std::regex's
// byte-by-byte semantics: '.' is one byte, and labels that are not valid
// UTF-8 still match. Errors come back in the message, not on stderr.
std::unique_ptr<RE2> compile_filter(const std::string& pattern) {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_log_errors(false);
  return std::make_unique<RE2>(pattern, o);
}

}  // namespace

Result<CpuTable> cpu_function_table(const Profile& profile, const CpuTableOptions& options) {
  std::unique_ptr<RE2> filter;
  if (!options.filter.empty()) {
    filter = compile_filter(options.filter);
    if (!filter->ok()) {
      return make_error("invalid --filter regex '" + options.filter + "': " + filter->error());
    }
  }
  Aggregate agg = aggregate(profile, options.per_thread, options.tids);
  bool sampled = is_sampled(profile.mode);
  CpuTable table;
  table.mode = profile.mode;
  table.options = options;
  for (const auto& [key, a] : agg.rows) {
    CpuRow r;
    r.tid = key.first;
    r.function = key.second;
    r.label = agg.index.functions[key.second].label;
    r.ncalls = a.ncalls;
    r.primitive_calls = a.primitive;
    r.self_samples = a.self_samples;
    r.cum_samples = a.cum_samples;
    r.tottime_s = static_cast<double>(a.self_ns) / kNsPerS;
    r.cumtime_s = static_cast<double>(a.cum_ns) / kNsPerS;
    r.tottime_percall_s = ratio(r.tottime_s, sampled ? a.self_samples : a.ncalls);
    r.cumtime_percall_s = ratio(r.cumtime_s, sampled ? a.cum_samples : a.primitive);
    table.rows.push_back(std::move(r));
  }
  table.total_rows = table.rows.size();
  if (filter) {
    std::erase_if(table.rows,
                  [&](const CpuRow& r) { return !RE2::PartialMatch(r.label, *filter); });
  }
  table.filtered_rows = table.rows.size();
  std::sort(table.rows.begin(), table.rows.end(), [&](const CpuRow& a, const CpuRow& b) {
    return row_less(a, b, options.sort, sampled, agg.index.functions);
  });
  if (options.limit > 0 && table.rows.size() > options.limit) table.rows.resize(options.limit);
  table.functions = std::move(agg.index.functions);
  return table;
}

CpuHeader cpu_header(const Profile& profile) {
  Aggregate agg = aggregate(profile, false, {});
  CpuHeader h;
  h.mode = profile.mode;
  h.rate_hz = profile.rate_hz;
  h.samples = agg.samples;
  h.lost_samples = profile.lost_samples;
  h.throttles = profile.throttles;
  h.wall_s = static_cast<double>(profile.wall_ns) / kNsPerS;
  h.cpu_s = static_cast<double>(profile.cpu_ns) / kNsPerS;
  h.profiled_s = static_cast<double>(agg.total_ns) / kNsPerS;
  if (is_sampled(profile.mode) && h.cpu_s > 0) {
    h.effective_rate_hz = static_cast<double>(h.samples) / h.cpu_s;
  }
  std::set<int32_t> tids;
  for (const auto& [tid, t] : agg.threads) tids.insert(tid);
  for (const ThreadInfo& t : profile.threads) tids.insert(t.tid);
  h.threads = tids.size();
  std::set<int32_t> pids;
  for (const ProcessInfo& p : profile.processes) pids.insert(p.pid);
  for (const auto& [tid, t] : agg.threads) pids.insert(t.pid);
  h.processes = pids.size();
  h.function_calls = agg.calls;
  h.primitive_calls = agg.primitive;
  h.instrument_overhead_ns_per_call = profile.instrument_overhead_ns_per_call;
  h.frames_closed_at_end = agg.closed_at_end;
  h.frames_closed_by_outer_exit = agg.closed_by_outer_exit;
  h.unmatched_exits = agg.unmatched_exits;
  h.reordered_times = agg.reordered_times;
  h.idle = idle_summary(profile);
  return h;
}

std::vector<CpuThreadRow> cpu_threads(const Profile& profile) {
  Aggregate agg = aggregate(profile, false, {});
  std::map<int32_t, CpuThreadRow> by_tid;
  for (const ThreadInfo& t : profile.threads) {
    CpuThreadRow& r = by_tid[t.tid];
    r.tid = t.tid;
    r.pid = t.pid;
    r.name = t.name;
  }
  for (const auto& [tid, t] : agg.threads) {
    CpuThreadRow& r = by_tid[tid];
    r.tid = tid;
    r.pid = t.pid;
    r.samples = t.samples;
    r.calls = t.calls;
    r.time_s = static_cast<double>(t.ns) / kNsPerS;
    r.share = agg.total_ns > 0 ? static_cast<double>(t.ns) / static_cast<double>(agg.total_ns) : 0;
  }
  for (const IdleThread& t : idle_summary(profile).threads) {
    auto it = by_tid.find(t.tid);
    if (it == by_tid.end()) continue;
    it->second.idle_s = t.time_s;
    it->second.idle_what = t.what;
  }
  std::vector<CpuThreadRow> rows;
  for (auto& [tid, r] : by_tid) rows.push_back(std::move(r));
  std::stable_sort(rows.begin(), rows.end(), [](const CpuThreadRow& a, const CpuThreadRow& b) {
    return a.time_s > b.time_s;
  });
  return rows;
}

std::vector<SelfShare> top_self_shares(const Profile& profile, size_t n) {
  Aggregate agg = aggregate(profile, false, {});
  bool sampled = is_sampled(profile.mode);
  std::vector<SelfShare> out;
  for (const auto& [key, a] : agg.rows) {
    if (a.self_ns == 0 && a.self_samples == 0) continue;
    SelfShare s;
    s.label = agg.index.functions[key.second].label;
    s.self_samples = a.self_samples;
    s.self_s = static_cast<double>(a.self_ns) / kNsPerS;
    if (sampled) {
      s.share = agg.samples ? static_cast<double>(a.self_samples) / agg.samples : 0;
    } else {
      s.share = agg.total_ns ? static_cast<double>(a.self_ns) / agg.total_ns : 0;
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const SelfShare& a, const SelfShare& b) {
    if (a.share != b.share) return a.share > b.share;
    return a.label < b.label;
  });
  if (n > 0 && out.size() > n) out.resize(n);
  return out;
}

}  // namespace strata::analysis
