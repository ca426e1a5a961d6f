#include "analysis/cpu_sort.h"

#include <algorithm>
#include <utility>

#include "common/strings.h"

namespace strata::analysis {
namespace {

// pstats' sort_arg_dict_default, plus "samples".
constexpr std::pair<std::string_view, CpuSort> kKeys[] = {
    {"calls", CpuSort::kNcalls},    {"ncalls", CpuSort::kNcalls},
    {"cumtime", CpuSort::kCumtime}, {"cumulative", CpuSort::kCumtime},
    {"filename", CpuSort::kFile},   {"module", CpuSort::kFile},
    {"line", CpuSort::kLine},       {"name", CpuSort::kName},
    {"nfl", CpuSort::kNfl},         {"pcalls", CpuSort::kPcalls},
    {"stdname", CpuSort::kStdname}, {"time", CpuSort::kTottime},
    {"tottime", CpuSort::kTottime}, {"samples", CpuSort::kSamples},
};

// pstats' legacy integer arguments (Stats.sort_stats(0) and so on).
constexpr std::pair<std::string_view, CpuSort> kLegacy[] = {{"-1", CpuSort::kStdname},
                                                            {"0", CpuSort::kNcalls},
                                                            {"1", CpuSort::kTottime},
                                                            {"2", CpuSort::kCumtime}};

Result<CpuSort> parse_one(std::string_view word) {
  for (const auto& [name, key] : kLegacy) {
    if (word == name) return key;
  }
  for (const auto& [name, key] : kKeys) {
    if (word == name) return key;
  }
  // A prefix: accepted when every key it begins has the same meaning.
  std::vector<std::string_view> matches;
  std::vector<CpuSort> meanings;
  for (const auto& [name, key] : kKeys) {
    if (word.empty() || !name.starts_with(word)) continue;
    matches.push_back(name);
    if (std::find(meanings.begin(), meanings.end(), key) == meanings.end()) meanings.push_back(key);
  }
  if (meanings.size() == 1) return meanings.front();
  if (meanings.empty()) {
    return make_error("unknown --sort key '" + printable(word) + "' (use " +
                      std::string(cpu_sort_key_names()) + ")");
  }
  std::string names;
  for (auto name : matches) names += (names.empty() ? "" : ", ") + std::string(name);
  return make_error("ambiguous --sort key '" + printable(word) + "' (" + names + ")");
}

std::string_view description(CpuSort key) {
  switch (key) {
    case CpuSort::kNcalls:
      return "call count";
    case CpuSort::kPcalls:
      return "primitive call count";
    case CpuSort::kTottime:
      return "internal time";
    case CpuSort::kCumtime:
      return "cumulative time";
    case CpuSort::kFile:
      return "file name";
    case CpuSort::kLine:
      return "line number";
    case CpuSort::kName:
      return "function name";
    case CpuSort::kNfl:
      return "name/file/line";
    case CpuSort::kStdname:
      return "standard name";
    case CpuSort::kSamples:
      return "sample count";
  }
  return "cumulative time";
}

}  // namespace

Result<CpuSortKeys> parse_cpu_sort(std::string_view list) {
  CpuSortKeys keys;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string_view word = list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    auto key = parse_one(word);
    if (!key) return key.error();
    keys.push_back(*key);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return keys;
}

std::string sort_description(const CpuSortKeys& keys) {
  std::string out;
  for (CpuSort key : keys) {
    if (!out.empty()) out += ", ";
    out += description(key);
  }
  return out;
}

std::string_view cpu_sort_key_names() {
  return "pstats' keys calls, ncalls, pcalls, time, tottime, cumulative, cumtime, filename, "
         "module, line, name, nfl, stdname, a unique prefix of one, -1, 0, 1 or 2, or samples; "
         "several comma-separated";
}

}  // namespace strata::analysis
