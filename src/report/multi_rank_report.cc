#include "report/multi_rank_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/strings.h"

namespace strata::report {
namespace {

Cell ns_cell(int64_t ns) {
  return number_cell(static_cast<double>(ns), 0);
}

Cell count_cell(int64_t n) {
  return number_cell(static_cast<double>(n), 0);
}

// A rank's label as a number where it is one (JSON gets a number, as in
// rank_sum's Rank column), else as text ("1 (b.sqlite)", a file name).
Cell rank_label_cell(const std::string& label) {
  bool digits = !label.empty() && label.size() < 16 &&
                label.find_first_not_of("0123456789") == std::string::npos;
  return digits ? number_cell(std::stod(label), 0) : text_cell(printable(label));
}

std::string devices_text(const std::vector<int64_t>& devices) {
  std::string out;
  for (int64_t d : devices) out += (out.empty() ? "" : ",") + std::to_string(d);
  return out.empty() ? "-" : out;
}

}  // namespace

std::string clock_note(const analysis::MultiRankResult& result) {
  const auto& c = result.clock;
  switch (c.method) {
    case analysis::ClockMethod::kOneClock:
      return "Clocks: all files from one host, one CLOCK_MONOTONIC: timestamps compared as they "
             "are.";
    case analysis::ClockMethod::kWallClock: {
      std::string note = fmt::format(
          "Clocks: {} hosts, each host's CLOCK_MONOTONIC moved onto CLOCK_REALTIME through the "
          "clock pair its files recorded at start; error within {} ns from the sampling, plus "
          "however far the hosts' CLOCK_REALTIME disagree (NTP: typically 0.1-10 ms, PTP: about "
          "1 us), which the files cannot tell.",
          c.domains, c.error_bound_ns);
      if (!result.collectives.empty()) {
        note += fmt::format(
            " Collective ends, which NCCL ranks reach together, spread by {} ns (median), {} ns "
            "(max): the alignment error is about that.",
            result.end_spread_median_ns, result.end_spread_max_ns);
      }
      return note;
    }
    case analysis::ClockMethod::kUnaligned: {
      std::string files;
      for (const auto& s : c.unaligned_sources) files += (files.empty() ? "" : ", ") + s;
      return fmt::format(
          "Clocks NOT aligned: the files come from {} clocks (hosts, or boots of one), and {} "
          "recorded no clock pair (written by an older strata, or an Nsight Systems export); "
          "waits between those clocks are meaningless.",
          c.domains, files);
    }
  }
  return "";
}

GpuReport rank_sum_report(const analysis::MultiRankResult& result,
                          std::span<const analysis::RankInput> inputs) {
  GpuReport r;
  r.table.title = " ** Per-Rank GPU Summary (rank_sum):";
  r.table.columns = {{"Rank", Align::kRight},
                     {"Local Rank", Align::kRight},
                     {"Host", Align::kLeft},
                     {"Devices", Align::kLeft},
                     {"Kernels", Align::kRight},
                     {"NCCL Kernels", Align::kRight},
                     {"Compute (ns)", Align::kRight},
                     {"Comm (ns)", Align::kRight},
                     {"Memory (ns)", Align::kRight},
                     {"Busy (ns)", Align::kRight},
                     {"Idle (ns)", Align::kRight},
                     {"Idle (%)", Align::kRight},
                     {"Comm Wait (ns)", Align::kRight},
                     {"File", Align::kLeft}};
  for (const auto& s : result.ranks) {
    const auto& in = inputs[s.input];
    double idle_pct = s.span_ns > 0
                          ? 100.0 * static_cast<double>(s.idle_ns) / static_cast<double>(s.span_ns)
                          : 0.0;
    Cell rank = in.rank ? count_cell(*in.rank) : text_cell(s.label);
    Cell local = in.local_rank ? count_cell(*in.local_rank) : text_cell("-");
    r.table.rows.push_back(
        {rank, local, text_cell(in.host), text_cell(devices_text(s.devices)), count_cell(s.kernels),
         count_cell(s.communication_kernels), ns_cell(s.compute_ns), ns_cell(s.communication_ns),
         ns_cell(s.memory_ns), ns_cell(s.busy_ns), ns_cell(s.idle_ns), number_cell(idle_pct, 1),
         ns_cell(s.wait_ns), text_cell(printable(in.source))});
  }
  r.notes.push_back(clock_note(result));
  return r;
}

GpuReport collective_sum_report(const analysis::MultiRankResult& result, size_t limit) {
  GpuReport r;
  r.table.title = " ** NCCL Collectives, Longest Delay First (collective_sum):";
  r.table.columns = {{"Collective", Align::kLeft},      {"Instance", Align::kRight},
                     {"Ranks", Align::kRight},          {"Last Rank", Align::kRight},
                     {"Delay (ns)", Align::kRight},     {"First Rank", Align::kRight},
                     {"Mean Wait (ns)", Align::kRight}, {"End Spread (ns)", Align::kRight},
                     {"Start (ns)", Align::kRight}};
  std::vector<size_t> order(result.collectives.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return result.collectives[a].delay_ns > result.collectives[b].delay_ns;
  });
  if (limit > 0 && order.size() > limit) {
    r.notes.push_back(fmt::format("{} of {} collectives shown (--limit).", limit, order.size()));
    order.resize(limit);
  }
  for (size_t i : order) {
    const auto& c = result.collectives[i];
    int64_t start = *std::min_element(c.start_ns.begin(), c.start_ns.end());
    r.table.rows.push_back({text_cell(std::string(analysis::collective_name(c.type))),
                            count_cell(c.index + 1),
                            count_cell(static_cast<int64_t>(c.ranks.size())),
                            rank_label_cell(result.ranks[c.last].label), ns_cell(c.delay_ns),
                            rank_label_cell(result.ranks[c.first].label), ns_cell(c.mean_wait_ns),
                            ns_cell(c.end_spread_ns), ns_cell(start - result.origin_ns)});
  }
  if (result.collectives.empty()) {
    r.notes.push_back("No NCCL kernels to match across the ranks.");
  } else {
    r.notes.push_back(
        "Instance: the k-th kernel of that collective on each rank. Delay: the last rank's start "
        "- the first's. Start: from the earliest GPU activity of any rank.");
  }
  return r;
}

GpuReport straggler_sum_report(const analysis::MultiRankResult& result) {
  GpuReport r;
  r.table.title = " ** Stragglers per Rank (straggler_sum):";
  r.table.columns = {{"Rank", Align::kRight},
                     {"Times Last", Align::kRight},
                     {"Delay Caused (ns)", Align::kRight},
                     {"Max Delay (ns)", Align::kRight},
                     {"Waited (ns)", Align::kRight},
                     {"Max Wait (ns)", Align::kRight}};
  for (const auto& s : result.ranks) {
    r.table.rows.push_back({rank_label_cell(s.label), count_cell(s.times_last),
                            ns_cell(s.delay_caused_ns), ns_cell(s.max_delay_ns), ns_cell(s.wait_ns),
                            ns_cell(s.max_wait_ns)});
  }
  if (result.worst) {
    const auto& w = result.ranks[*result.worst];
    r.notes.push_back(fmt::format(
        "Worst straggler: rank {}, last at {} of {} collectives, {} ns of delay caused (longest "
        "{} ns).",
        printable(w.label), w.times_last, result.collectives.size(), w.delay_caused_ns,
        w.max_delay_ns));
  } else if (!result.collectives.empty()) {
    r.notes.push_back("No straggler: every collective started at the same time on every rank.");
  }
  if (!result.collectives.empty()) {
    r.notes.push_back(fmt::format("Total wait over all ranks: {} ns; longest single wait: {} ns.",
                                  result.total_wait_ns, result.max_wait_ns));
  }
  return r;
}

}  // namespace strata::report
