#include "analysis/multi_rank.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <utility>

namespace strata::analysis {
namespace {

struct Interval {
  int64_t start;
  int64_t end;
};

// Sum of the lengths of the union of `intervals` (reordered).
int64_t union_length(std::vector<Interval>& intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  int64_t total = 0;
  bool open = false;
  int64_t cur_start = 0, cur_end = 0;
  for (const auto& iv : intervals) {
    if (iv.end < iv.start) continue;
    if (!open || iv.start > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = iv.start;
      cur_end = iv.end;
      open = true;
    } else {
      cur_end = std::max(cur_end, iv.end);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

std::string file_name(const std::string& source) {
  std::string name = std::filesystem::path(source).filename().string();
  return name.empty() ? source : name;
}

ClockAlignment align_clocks(std::span<const RankInput> inputs) {
  ClockAlignment out;
  out.offset_ns.assign(inputs.size(), 0);
  bool all_boot_ids = std::all_of(inputs.begin(), inputs.end(),
                                  [](const RankInput& in) { return !in.boot_id.empty(); });
  std::vector<std::string> keys;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    if (all_boot_ids) {
      keys.push_back("boot:" + in.boot_id);
    } else if (!in.host.empty()) {
      keys.push_back("host:" + in.host);
    } else {
      keys.push_back("file:" + std::to_string(i));
    }
  }
  std::map<std::string, std::optional<size_t>>
      reference;  // domain -> first input with a clock pair
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto& ref = reference[keys[i]];
    if (!ref && inputs[i].clock) ref = i;
  }
  out.domains = reference.size();
  if (out.domains <= 1) {
    out.method = ClockMethod::kOneClock;
    return out;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!reference[keys[i]]) out.unaligned_sources.push_back(inputs[i].source);
  }
  if (!out.unaligned_sources.empty()) {
    out.method = ClockMethod::kUnaligned;
    return out;
  }
  out.method = ClockMethod::kWallClock;
  std::vector<int64_t> errors;
  for (const auto& [key, ref] : reference) errors.push_back(inputs[*ref].clock->error_ns);
  std::sort(errors.rbegin(), errors.rend());
  out.error_bound_ns = errors[0] + (errors.size() > 1 ? errors[1] : 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ClockPair& pair = *inputs[*reference[keys[i]]].clock;
    out.offset_ns[i] = pair.realtime_ns - pair.monotonic_ns;
  }
  return out;
}

// The output order: by rank number, then files without one in input order.
std::vector<size_t> rank_order(std::span<const RankInput> inputs) {
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto& ra = inputs[a].rank;
    const auto& rb = inputs[b].rank;
    if (ra.has_value() != rb.has_value()) return ra.has_value();
    return ra && *ra < *rb;
  });
  return order;
}

using InputsByRank = std::map<int64_t, std::vector<size_t>>;  // rank -> inputs, in output order

InputsByRank inputs_by_rank(std::span<const RankInput> inputs, const std::vector<size_t>& order) {
  InputsByRank by_rank;
  for (size_t i : order) {
    if (inputs[i].rank) by_rank[*inputs[i].rank].push_back(i);
  }
  return by_rank;
}

std::string rank_label(const RankInput& in, const InputsByRank& by_rank) {
  if (!in.rank) return file_name(in.source);
  if (by_rank.at(*in.rank).size() > 1) {
    return std::to_string(*in.rank) + " (" + file_name(in.source) + ")";
  }
  return std::to_string(*in.rank);
}

// One rank's collective kernels by type, aligned, each list by start.
using CollectiveTimes = std::map<Collective, std::vector<Interval>>;

// Counts the rank's kernels by class into `s`; its NCCL kernels go to
// `collectives` (aligned by `offset`), every kernel to `busy` (unaligned).
void tally_kernels(const RankInput& in, int64_t offset, RankSummary& s,
                   CollectiveTimes& collectives, std::vector<Interval>& busy) {
  std::unordered_map<int64_t, KernelKind> kinds;  // name id -> its class, classified once
  std::set<int64_t> devices;
  const auto& k = in.gpu.kernels;
  for (size_t r = 0; r < k.size(); ++r) {
    auto it = kinds.find(k.name_id[r]);
    if (it == kinds.end()) {
      const std::string* name = in.gpu.string(k.name_id[r]);
      it = kinds.emplace(k.name_id[r], name ? classify_kernel(*name) : KernelKind{}).first;
    }
    const KernelKind kind = it->second;
    const int64_t duration = k.end[r] - k.start[r];
    ++s.kernels;
    if (r < k.device_id.size()) devices.insert(k.device_id[r]);
    switch (kind.cls) {
      case KernelClass::kCompute:
        ++s.compute_kernels;
        s.compute_ns += duration;
        break;
      case KernelClass::kCommunication:
        ++s.communication_kernels;
        s.communication_ns += duration;
        collectives[kind.collective].push_back({k.start[r] + offset, k.end[r] + offset});
        break;
      case KernelClass::kMemory:
        ++s.memory_kernels;
        s.memory_ns += duration;
        break;
    }
    busy.push_back({k.start[r], k.end[r]});
  }
  s.devices.assign(devices.begin(), devices.end());
}

// Memcpy and memset rows: memory time, and busy intervals (unaligned).
void tally_memops(const RankInput& in, RankSummary& s, std::vector<Interval>& busy) {
  for (const store::MemOpColumns* ops : {&in.gpu.memcpy, &in.gpu.memset}) {
    for (size_t r = 0; r < ops->size(); ++r) {
      ++s.memops;
      s.memory_ns += ops->end[r] - ops->start[r];
      busy.push_back({ops->start[r], ops->end[r]});
    }
  }
}

// The rank's span (aligned by `offset`), busy and idle time; `busy` not empty.
void set_span(std::vector<Interval>& busy, int64_t offset, RankSummary& s) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& iv : busy) {
    lo = std::min(lo, iv.start);
    hi = std::max(hi, iv.end);
  }
  s.span_start_ns = lo + offset;
  s.span_end_ns = hi + offset;
  s.span_ns = hi - lo;
  s.busy_ns = union_length(busy);
  s.idle_ns = s.span_ns - s.busy_ns;
}

// One summary per input, in `order`, with each one's collectives; sets
// out.ranks, out.origin_ns and the warnings about empty files.
std::vector<CollectiveTimes> summarize_ranks(std::span<const RankInput> inputs,
                                             const std::vector<size_t>& order,
                                             const InputsByRank& by_rank, MultiRankResult& out) {
  std::vector<CollectiveTimes> collectives(order.size());
  bool any_activity = false;
  int64_t origin = INT64_MAX;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    size_t i = order[pos];
    const RankInput& in = inputs[i];
    const int64_t offset = out.clock.offset_ns[i];
    RankSummary s;
    s.input = i;
    s.label = rank_label(in, by_rank);
    std::vector<Interval> busy;
    busy.reserve(in.gpu.kernels.size() + in.gpu.memcpy.size() + in.gpu.memset.size());
    tally_kernels(in, offset, s, collectives[pos], busy);
    tally_memops(in, s, busy);
    if (!busy.empty()) {
      set_span(busy, offset, s);
      origin = std::min(origin, s.span_start_ns);
      any_activity = true;
    } else {
      out.warnings.push_back(in.source + " holds no kernels, memcpy or memset rows");
    }
    for (auto& [type, list] : collectives[pos]) {
      std::sort(list.begin(), list.end(),
                [](const Interval& a, const Interval& b) { return a.start < b.start; });
    }
    out.ranks.push_back(std::move(s));
  }
  out.origin_ns = any_activity ? origin : 0;
  return collectives;
}

// Ranks in several files, files without a rank.
void warn_about_ranks(std::span<const RankInput> inputs, const std::vector<size_t>& order,
                      const InputsByRank& by_rank, std::vector<std::string>& warnings) {
  for (const auto& [rank, files] : by_rank) {
    if (files.size() < 2) continue;
    std::string list;
    for (size_t i : files) list += (list.empty() ? "" : ", ") + inputs[i].source;
    warnings.push_back("rank " + std::to_string(rank) + " is in " + std::to_string(files.size()) +
                       " files (" + list + "): traces of different runs? Each is shown on its own");
  }
  for (size_t i : order) {
    if (!inputs[i].rank) {
      warnings.push_back(inputs[i].source +
                         " records no rank (no launcher variables, or written by an older "
                         "strata): shown by its file name");
    }
  }
}

// World sizes that differ, or ranks of the world with no file; several jobs.
void warn_about_job(std::span<const RankInput> inputs, const InputsByRank& by_rank,
                    std::vector<std::string>& warnings) {
  std::set<int64_t> world_sizes;
  std::set<std::string> jobs;
  for (const auto& in : inputs) {
    if (in.world_size) world_sizes.insert(*in.world_size);
    if (!in.job_id.empty()) jobs.insert(in.job_id);
  }
  if (world_sizes.size() > 1) {
    std::string list;
    for (int64_t w : world_sizes) list += (list.empty() ? "" : ", ") + std::to_string(w);
    warnings.push_back("the files disagree on the world size (" + list + ")");
  } else if (world_sizes.size() == 1) {
    int64_t world = *world_sizes.begin();
    std::string missing;
    int64_t count = 0;
    for (int64_t r = 0; r < world && count < 16; ++r) {
      if (!by_rank.count(r)) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        ++count;
      }
    }
    if (!missing.empty()) {
      warnings.push_back("world size " + std::to_string(world) + " but no file of rank " + missing +
                         (count == 16 ? ", ..." : ""));
    }
  }
  if (jobs.size() > 1) {
    warnings.push_back("the files come from " + std::to_string(jobs.size()) +
                       " different jobs (TORCHELASTIC_RUN_ID / SLURM_JOB_ID)");
  }
}

// The k-th `type` kernel of each rank in `taking_part`, as one collective;
// charges the waits to the ranks and the delay to the last.
CollectiveInstance match_instance(Collective type, size_t k, const std::vector<size_t>& taking_part,
                                  const std::vector<CollectiveTimes>& collectives,
                                  MultiRankResult& out) {
  CollectiveInstance c;
  c.type = type;
  c.index = static_cast<int64_t>(k);
  c.ranks = taking_part;
  int64_t latest = INT64_MIN, earliest = INT64_MAX;
  int64_t end_lo = INT64_MAX, end_hi = INT64_MIN;
  for (size_t pos : taking_part) {
    const Interval& iv = collectives[pos].at(type)[k];
    c.start_ns.push_back(iv.start);
    c.end_ns.push_back(iv.end);
    if (iv.start > latest) {
      latest = iv.start;
      c.last = pos;
    }
    if (iv.start < earliest) {
      earliest = iv.start;
      c.first = pos;
    }
    end_lo = std::min(end_lo, iv.end);
    end_hi = std::max(end_hi, iv.end);
  }
  c.delay_ns = latest - earliest;
  c.end_spread_ns = end_hi - end_lo;
  int64_t waited = 0;
  for (size_t j = 0; j < taking_part.size(); ++j) {
    RankSummary& s = out.ranks[taking_part[j]];
    int64_t wait = latest - c.start_ns[j];
    s.wait_ns += wait;
    s.max_wait_ns = std::max(s.max_wait_ns, wait);
    out.max_wait_ns = std::max(out.max_wait_ns, wait);
    waited += wait;
  }
  out.total_wait_ns += waited;
  c.mean_wait_ns = waited / static_cast<int64_t>(taking_part.size() - 1);
  if (c.delay_ns > 0) {
    RankSummary& s = out.ranks[c.last];
    ++s.times_last;
    s.delay_caused_ns += c.delay_ns;
    s.max_delay_ns = std::max(s.max_delay_ns, c.delay_ns);
  }
  return c;
}

// The collectives of one type: the k-th kernel on each rank that ran the
// type, for k up to the fewest any ran; warns where ranks disagree.
void match_collectives(Collective type, const std::vector<CollectiveTimes>& collectives,
                       MultiRankResult& out) {
  std::vector<size_t> taking_part;
  size_t count = SIZE_MAX, most = 0;
  for (size_t pos = 0; pos < collectives.size(); ++pos) {
    auto it = collectives[pos].find(type);
    if (it == collectives[pos].end() || it->second.empty()) continue;
    taking_part.push_back(pos);
    count = std::min(count, it->second.size());
    most = std::max(most, it->second.size());
  }
  std::string name(collective_name(type));
  if (taking_part.size() < 2) {
    out.warnings.push_back("only rank " + out.ranks[taking_part[0]].label + " ran " + name +
                           " kernels: nothing to match them with");
    return;
  }
  if (count != most) {
    std::string counts;
    for (size_t pos : taking_part) {
      counts += (counts.empty() ? "" : ", ") + std::string("rank ") + out.ranks[pos].label + ": " +
                std::to_string(collectives[pos].at(type).size());
    }
    out.warnings.push_back(name + " kernel counts differ between ranks (" + counts +
                           "); the first " + std::to_string(count) + " of each are matched");
  }
  if (taking_part.size() < out.ranks.size()) {
    out.warnings.push_back(name + " kernels are on " + std::to_string(taking_part.size()) + " of " +
                           std::to_string(out.ranks.size()) + " ranks; matched among those");
  }
  for (size_t k = 0; k < count; ++k) {
    out.collectives.push_back(match_instance(type, k, taking_part, collectives, out));
  }
}

// Every collective type any rank ran, matched; the result by earliest start.
void match_all_collectives(const std::vector<CollectiveTimes>& collectives, MultiRankResult& out) {
  std::set<Collective> types;
  for (const auto& per_rank : collectives) {
    for (const auto& [type, list] : per_rank) types.insert(type);
  }
  for (Collective type : types) match_collectives(type, collectives, out);
  std::stable_sort(out.collectives.begin(), out.collectives.end(),
                   [](const CollectiveInstance& a, const CollectiveInstance& b) {
                     return *std::min_element(a.start_ns.begin(), a.start_ns.end()) <
                            *std::min_element(b.start_ns.begin(), b.start_ns.end());
                   });
}

// The median and largest end spread over the collectives: how far the
// aligned clocks still disagree.
void set_end_spread(MultiRankResult& out) {
  if (out.collectives.empty()) return;
  std::vector<int64_t> spreads;
  for (const auto& c : out.collectives) spreads.push_back(c.end_spread_ns);
  std::sort(spreads.begin(), spreads.end());
  size_t n = spreads.size();
  out.end_spread_median_ns = n % 2 ? spreads[n / 2] : (spreads[n / 2 - 1] + spreads[n / 2]) / 2;
  out.end_spread_max_ns = spreads.back();
}

// The rank that caused the largest delay, if any was late.
std::optional<size_t> worst_rank(const std::vector<RankSummary>& ranks) {
  std::optional<size_t> worst;
  int64_t worst_delay = 0;
  for (size_t pos = 0; pos < ranks.size(); ++pos) {
    if (ranks[pos].delay_caused_ns > worst_delay) {
      worst_delay = ranks[pos].delay_caused_ns;
      worst = pos;
    }
  }
  return worst;
}

}  // namespace

MultiRankResult analyze_ranks(std::span<const RankInput> inputs) {
  MultiRankResult out;
  out.clock = align_clocks(inputs);
  const std::vector<size_t> order = rank_order(inputs);
  const InputsByRank by_rank = inputs_by_rank(inputs, order);
  const std::vector<CollectiveTimes> collectives = summarize_ranks(inputs, order, by_rank, out);
  warn_about_ranks(inputs, order, by_rank, out.warnings);
  warn_about_job(inputs, by_rank, out.warnings);
  match_all_collectives(collectives, out);
  set_end_spread(out);
  out.worst = worst_rank(out.ranks);
  return out;
}

}  // namespace strata::analysis
