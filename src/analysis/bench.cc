#include "analysis/bench.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"

namespace strata::analysis {
namespace {

// bench_quantities' built-in quantities come first; the metrics follow.
constexpr size_t kFirstMetric = 5;

std::optional<double> quantity_of(const store::BenchRun& run, size_t index,
                                  std::span<const std::string> metric_keys) {
  constexpr double kNsPerMs = 1e6;
  switch (index) {
    case 0:
      return static_cast<double>(run.wall_ns) / kNsPerMs;
    case 1:
      return static_cast<double>(run.user_ns) / kNsPerMs;
    case 2:
      return static_cast<double>(run.sys_ns) / kNsPerMs;
    case 3:
      return static_cast<double>(run.max_rss_kb) / 1024.0;
    case 4:
      if (!run.minor_faults) return std::nullopt;
      return static_cast<double>(*run.minor_faults);
    default:
      break;
  }
  const std::string& key = metric_keys[index - kFirstMetric];
  // The last value printed wins, as a program may print progress first.
  for (auto it = run.metrics.rbegin(); it != run.metrics.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return std::nullopt;
}

bool succeeded(const store::BenchRun& run) {
  return run.exit_status && *run.exit_status == 0;
}

}  // namespace

std::vector<Quantity> bench_quantities(std::span<const std::string> metric_keys) {
  std::vector<Quantity> out = {{"wall", "ms"},
                               {"user", "ms"},
                               {"sys", "ms"},
                               {"peak RSS", "MiB"},
                               {"page faults", "count", /*left_out_when_absent=*/true}};
  for (const auto& key : metric_keys) out.push_back({key, ""});
  return out;
}

std::vector<double> measured_values(std::span<const store::BenchRun> runs, std::string_view label,
                                    size_t index, std::span<const std::string> metric_keys) {
  std::vector<const store::BenchRun*> measured;
  for (const auto& r : runs) {
    if (!r.warmup && r.label == label && succeeded(r)) measured.push_back(&r);
  }
  std::stable_sort(measured.begin(), measured.end(),
                   [](auto* a, auto* b) { return a->iteration < b->iteration; });
  std::vector<double> values;
  for (auto* r : measured) {
    if (auto v = quantity_of(*r, index, metric_keys)) values.push_back(*v);
  }
  return values;
}

BenchSummary summarize_bench(std::span<const store::BenchRun> runs,
                             std::span<const std::string> metric_keys) {
  BenchSummary out;
  out.quantities = bench_quantities(metric_keys);
  const size_t nq = out.quantities.size();

  // Measured runs per label, in iteration order.
  std::vector<std::string> labels;
  for (const auto& r : runs) {
    if (std::find(labels.begin(), labels.end(), r.label) == labels.end()) labels.push_back(r.label);
  }
  std::vector<std::vector<const store::BenchRun*>> measured(labels.size());
  for (const auto& r : runs) {
    if (!succeeded(r)) {
      out.failures.push_back({r.label, r.iteration, r.warmup, r.exit_status, r.signal});
    }
    if (r.warmup) continue;
    size_t li = std::find(labels.begin(), labels.end(), r.label) - labels.begin();
    measured[li].push_back(&r);
    if (succeeded(r)) {
      for (size_t k = 0; k < metric_keys.size(); ++k) {
        if (!quantity_of(r, kFirstMetric + k, metric_keys)) {
          out.missing_metrics.push_back({r.label, r.iteration, metric_keys[k]});
        }
      }
    }
  }
  for (auto& list : measured) {
    std::sort(list.begin(), list.end(),
              [](auto* a, auto* b) { return a->iteration < b->iteration; });
  }

  for (size_t li = 0; li < labels.size(); ++li) {
    CommandSummary cs;
    cs.label = labels[li];
    cs.command = measured[li].empty() ? std::vector<std::string>{} : measured[li].front()->command;
    cs.measured = measured[li].size();
    for (auto* r : measured[li]) cs.succeeded += succeeded(*r) ? 1 : 0;
    for (size_t q = 0; q < nq; ++q) {
      cs.values.push_back(summarize(measured_values(runs, labels[li], q, metric_keys)));
    }
    out.commands.push_back(std::move(cs));
  }

  if (labels.size() == 2) {
    for (size_t q = 0; q < nq; ++q) {
      std::vector<double> ratios;
      size_t pairs = std::min(measured[0].size(), measured[1].size());
      for (size_t i = 0; i < pairs; ++i) {
        const auto* a = measured[0][i];
        const auto* b = measured[1][i];
        if (!succeeded(*a) || !succeeded(*b)) continue;
        auto va = quantity_of(*a, q, metric_keys);
        auto vb = quantity_of(*b, q, metric_keys);
        if (!va || !vb || *vb == 0) continue;
        ratios.push_back(*va / *vb);
      }
      if (auto s = summarize(ratios)) {
        out.ratios.push_back(Ratio{s->count, s->median, s->min, s->max});
      } else {
        out.ratios.push_back(std::nullopt);
      }
    }
  }
  return out;
}

std::optional<double> find_metric(std::string_view line, std::string_view key) {
  if (key.empty()) return std::nullopt;
  size_t pos = 0;
  while ((pos = line.find(key, pos)) != std::string_view::npos) {
    bool starts_word = pos == 0 || std::isspace(static_cast<unsigned char>(line[pos - 1]));
    size_t eq = pos + key.size();
    if (starts_word && eq < line.size() && line[eq] == '=') {
      size_t begin = eq + 1;
      size_t end = begin;
      while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
      std::string_view value = line.substr(begin, end - begin);
      // Accept a trailing ',' or ';' as people write "a=1, b=2".
      while (!value.empty() && (value.back() == ',' || value.back() == ';')) value.remove_suffix(1);
      if (auto v = parse_double(value)) return v;
    }
    pos = eq;
  }
  return std::nullopt;
}

}  // namespace strata::analysis
