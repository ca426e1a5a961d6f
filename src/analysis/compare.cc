#include "analysis/compare.h"

#include <map>
#include <set>

#include "analysis/cpu_pstats.h"
#include "analysis/gpu_summary.h"

namespace strata::analysis {
namespace {

KeyedRow summary_row(const SummaryRow& row, std::string name) {
  KeyedRow out;
  out.key = name;
  out.name = std::move(name);
  out.values = {static_cast<double>(row.stats.total)};
  out.count = row.stats.count;
  return out;
}

std::vector<KeyedRow> summary_rows(const GpuSummary& summary) {
  std::vector<KeyedRow> out;
  for (const auto& row : summary.rows) out.push_back(summary_row(row, row.name));
  return out;
}

// Time and bytes per operation: cuda_gpu_mem_time_sum's and
// cuda_gpu_mem_size_sum's rows of one name are one row.
std::vector<KeyedRow> mem_op_rows(const store::GpuTables& tables) {
  std::vector<KeyedRow> out = summary_rows(cuda_gpu_mem_time_sum(tables));
  std::map<std::string, int64_t> bytes;
  for (const auto& row : cuda_gpu_mem_size_sum(tables).rows) bytes[row.name] += row.stats.total;
  for (auto& row : out) row.values.push_back(static_cast<double>(bytes[row.key]));
  return out;
}

// nvtx_sum has a row per range and style; a start/end range is named apart
// from a push/pop range of the same text.
std::vector<KeyedRow> nvtx_rows(const store::GpuTables& tables) {
  std::vector<KeyedRow> out;
  for (const auto& row : nvtx_sum(tables).rows) {
    out.push_back(
        summary_row(row, row.style == "PushPop" ? row.name : row.name + " (" + row.style + ")"));
  }
  return out;
}

// A function's key without the directories of its file: "x.cc\x1fname".
std::string without_directories(const std::string& key) {
  const size_t sep = key.find('\x1f');
  const size_t slash = key.rfind('/', sep);
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

// Builds in two directories name one source file by two relative paths
// (../../examples/x.cc, ../../../examples/x.cc). A function only one side
// has under its path is matched with the function of the same name and
// file name that only the other side has, when each side has just one.
void match_moved_files(const std::vector<KeyedRow>& a, std::vector<KeyedRow>& b) {
  std::set<std::string> keys_a, keys_b;
  for (const auto& r : a) keys_a.insert(r.key);
  for (const auto& r : b) keys_b.insert(r.key);
  std::map<std::string, std::set<std::string>> only_a, only_b;
  for (const auto& key : keys_a) {
    if (!keys_b.count(key)) only_a[without_directories(key)].insert(key);
  }
  for (const auto& key : keys_b) {
    if (!keys_a.count(key)) only_b[without_directories(key)].insert(key);
  }
  for (auto& r : b) {
    if (keys_a.count(r.key)) continue;
    const std::string short_key = without_directories(r.key);
    auto in_a = only_a.find(short_key);
    if (in_a != only_a.end() && in_a->second.size() == 1 && only_b[short_key].size() == 1) {
      r.key = *in_a->second.begin();
    }
  }
}

std::optional<WallComparison> compare_wall(const CompareSide& a, const CompareSide& b,
                                           const CompareOptions& options, WallMissing* missing) {
  if (a.wall.empty() || b.wall.empty()) {
    *missing = WallMissing::kNoWall;
    return std::nullopt;
  }
  if (a.wall_source != b.wall_source) {
    *missing = WallMissing::kMeasuredApart;
    return std::nullopt;
  }
  auto wall = compare_quantities(a.wall, b.wall, options.confidence);
  if (wall.quantities.empty()) {
    *missing = WallMissing::kNoWall;
    return std::nullopt;
  }
  return wall;
}

}  // namespace

std::string_view section_key(SectionKind kind) {
  switch (kind) {
    case SectionKind::kCpuFunctions:
      return "cpu_functions";
    case SectionKind::kTorchOps:
      return "op_sum";
    case SectionKind::kKernels:
      return "cuda_gpu_kern_sum";
    case SectionKind::kCudaApi:
      return "cuda_api_sum";
    case SectionKind::kMemOps:
      return "cuda_gpu_mem_time_sum";
    case SectionKind::kNvtx:
      break;
  }
  return "nvtx_sum";
}

size_t section_measures(SectionKind kind) {
  switch (kind) {
    case SectionKind::kCpuFunctions:
    case SectionKind::kTorchOps:
    case SectionKind::kMemOps:
      return 2;
    default:
      return 1;
  }
}

std::vector<size_t> section_sort_by(SectionKind kind) {
  if (kind == SectionKind::kTorchOps) return {0, 1};
  return {0};
}

std::vector<KeyedRow> cpu_function_rows(const Profile& profile) {
  std::vector<KeyedRow> out;
  // No filter, so the table cannot fail; an empty profile has no rows.
  auto table = cpu_function_table(profile, CpuTableOptions{});
  if (!table) return out;
  for (const auto& row : table->rows) {
    const Function& f = table->functions[row.function];
    KeyedRow k;
    k.key = f.file_or_module() + '\x1f' + f.name;
    k.name = f.label;
    k.values = {row.tottime_s * 1e9, row.cumtime_s * 1e9};
    k.count = static_cast<int64_t>(row.ncalls);
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<KeyedRow> torch_op_rows(const TorchOpTable& table) {
  std::vector<KeyedRow> out;
  for (const auto& row : table.rows) {
    if (row.device) continue;
    KeyedRow k;
    k.key = row.name;
    k.name = row.name;
    k.values = {static_cast<double>(row.self_cpu_ns), static_cast<double>(row.self_cuda_ns)};
    k.count = row.calls;
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<KeyedRow> gpu_rows(SectionKind kind, const store::GpuTables& tables) {
  switch (kind) {
    case SectionKind::kKernels:
      return summary_rows(cuda_gpu_kern_sum(tables));
    case SectionKind::kCudaApi:
      return summary_rows(cuda_api_sum(tables));
    case SectionKind::kMemOps:
      return mem_op_rows(tables);
    case SectionKind::kNvtx:
      return nvtx_rows(tables);
    default:
      return {};
  }
}

Comparison compare_sides(const CompareSide& a, const CompareSide& b,
                         const CompareOptions& options) {
  Comparison out;
  out.wall = compare_wall(a, b, options, &out.wall_missing);
  out.verdict = decide_verdict(out.wall, options.min_change);

  auto add = [&](SectionKind kind, const std::vector<KeyedRow>& ra,
                 const std::vector<KeyedRow>& rb) {
    RowDiffOptions o;
    o.measures = section_measures(kind);
    o.sort_by = section_sort_by(kind);
    o.limit = options.limit;
    SectionDiff s{kind, diff_rows(ra, rb, o)};
    if (s.diff.total_rows > 0) out.sections.push_back(std::move(s));
  };
  auto one_side = [&](SectionKind kind, bool in_a, bool in_b) {
    if (in_a != in_b) out.one_sided.emplace_back(kind, in_a);
    return in_a && in_b;
  };

  if (one_side(SectionKind::kCpuFunctions, a.cpu.has_value(), b.cpu.has_value())) {
    auto rows_a = cpu_function_rows(*a.cpu);
    auto rows_b = cpu_function_rows(*b.cpu);
    match_moved_files(rows_a, rows_b);
    add(SectionKind::kCpuFunctions, rows_a, rows_b);
    out.cpu_modes_differ = is_sampled(a.cpu->mode) != is_sampled(b.cpu->mode);
  }
  if (one_side(SectionKind::kTorchOps, a.ops.has_value(), b.ops.has_value())) {
    add(SectionKind::kTorchOps, torch_op_rows(*a.ops), torch_op_rows(*b.ops));
  }
  if (one_side(SectionKind::kKernels, a.gpu.has_value(), b.gpu.has_value())) {
    for (auto kind :
         {SectionKind::kKernels, SectionKind::kCudaApi, SectionKind::kMemOps, SectionKind::kNvtx}) {
      add(kind, gpu_rows(kind, *a.gpu), gpu_rows(kind, *b.gpu));
    }
  }
  return out;
}

}  // namespace strata::analysis
