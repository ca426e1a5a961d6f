#include "report/kernel_sections.h"

#include <fmt/format.h>

#include <cmath>

#include "analysis/sol_rules.h"
#include "common/strings.h"

namespace strata::report {
namespace {

using analysis::FindingKind;
using analysis::FindingSeverity;
using analysis::KernelFinding;
using analysis::KernelSection;

constexpr const char* kLaunchStatistics = "Launch Statistics";
constexpr const char* kOccupancy = "Occupancy";
constexpr size_t kWrapWidth = 100;  // the 100 columns of strata's other output
constexpr const char* kIndent = "    ";
constexpr const char* kTextIndent = "          ";

}  // namespace

Cell ncu_value_cell(double v) {
  bool integral = std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15;
  return number_cell(v, integral ? 0 : 2, true);
}

namespace {

Cell value_cell(double v) {
  return ncu_value_cell(v);
}

// ncu's byte units: byte below 1000, then Kbyte and Mbyte of 1000.
std::pair<double, std::string> scaled_bytes(int64_t bytes, const std::string& per) {
  if (bytes < 1000) return {static_cast<double>(bytes), "byte" + per};
  if (bytes < 1000 * 1000) return {bytes / 1e3, "Kbyte" + per};
  return {bytes / 1e6, "Mbyte" + per};
}

// A block limit as shown: where a resource imposes none (0 registers, no
// shared memory), the SM's block limit, which no launch exceeds either.
int shown_limit(int limit, const analysis::OccupancyResult& r) {
  return limit == analysis::kUnlimited ? r.limit_blocks : limit;
}

std::string percent(double v) {
  return fmt::format("{:.4g}%", v);
}

std::string limiter_words(unsigned limiters) {
  std::vector<std::string> parts;
  if (limiters & analysis::kLimitRegisters) parts.push_back("the number of required registers");
  if (limiters & analysis::kLimitSharedMem) parts.push_back("the required amount of shared memory");
  if (limiters & analysis::kLimitWarps) parts.push_back("the number of warps within each block");
  if (limiters & analysis::kLimitBlocks) {
    parts.push_back("the number of blocks that can fit on the multiprocessor");
  }
  if (limiters & analysis::kLimitBarriers) parts.push_back("the number of barriers per block");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? ", and " : ", ";
    out += parts[i];
  }
  return out;
}

// Greedy word wrap of `text` into lines of at most `width` characters.
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    std::string word = text.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string estimate_label(const KernelFinding& f) {
  if (!f.est_speedup_pct) return "";
  return fmt::format("Est. {}Speedup: {}", f.est_local ? "Local " : "",
                     percent(*f.est_speedup_pct));
}

}  // namespace

// ncu's rule block: severity, estimate, then the text indented beneath.
std::string render_finding(const KernelFinding& f) {
  std::string head = std::string(kIndent) + fmt::format("{:<6}", severity_name(f.severity));
  std::vector<std::string> lines =
      wrap(finding_message(f), kWrapWidth - std::string(kTextIndent).size());
  std::string out;
  if (f.est_speedup_pct) {
    out += head + estimate_label(f) + "\n";
  } else if (!lines.empty()) {
    out += head + lines.front() + "\n";
    lines.erase(lines.begin());
  }
  for (const auto& line : lines) out += kTextIndent + line + "\n";
  return out;
}

std::string render_section(const std::string& name,
                           const std::vector<const std::vector<Cell>*>& rows) {
  size_t w_name = std::string("Metric Name").size();
  size_t w_unit = std::string("Metric Unit").size();
  size_t w_value = std::string("Metric Value").size();
  for (const auto* row : rows) {
    w_name = std::max(w_name, (*row)[1].text.size());
    w_unit = std::max(w_unit, (*row)[2].text.size());
    w_value = std::max(w_value, (*row)[3].text.size());
  }
  std::string rule = fmt::format("{}{} {} {}\n", kIndent, std::string(w_name, '-'),
                                 std::string(w_unit, '-'), std::string(w_value, '-'));
  std::string out = fmt::format("{}Section: {}\n", kIndent, name);
  out += rule;
  out += fmt::format("{}{:<{}} {:>{}} {:>{}}\n", kIndent, "Metric Name", w_name, "Metric Unit",
                     w_unit, "Metric Value", w_value);
  out += rule;
  for (const auto* row : rows) {
    out += fmt::format("{}{:<{}} {:>{}} {:>{}}\n", kIndent, (*row)[1].text, w_name, (*row)[2].text,
                       w_unit, (*row)[3].text, w_value);
  }
  out += rule;
  return out;
}

namespace {

Table findings_table(const std::vector<KernelFinding>& findings) {
  Table t;
  t.columns = {{"Section Name", Align::kLeft}, {"Rule", Align::kLeft},
               {"Severity", Align::kLeft},     {"Est. Speedup (%)", Align::kRight},
               {"Speedup Type", Align::kLeft}, {"Message", Align::kLeft}};
  for (const auto& f : findings) {
    std::vector<Cell> row = {text_cell(section_name(f.section)), text_cell(finding_rule_id(f.kind)),
                             text_cell(severity_name(f.severity))};
    if (f.est_speedup_pct) {
      Cell c = number_cell(*f.est_speedup_pct, 2);
      c.number = *f.est_speedup_pct;
      row.push_back(c);
      row.push_back(text_cell(f.est_local ? "local" : "global"));
    } else {
      row.push_back(text_cell(""));
      row.push_back(text_cell(""));
    }
    row.push_back(text_cell(finding_message(f)));
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

std::string severity_name(FindingSeverity s) {
  switch (s) {
    case FindingSeverity::kOpt:
      return "OPT";
    case FindingSeverity::kInf:
      return "INF";
    case FindingSeverity::kWrn:
      return "WRN";
  }
  return "INF";
}

std::string section_name(KernelSection s) {
  switch (s) {
    case KernelSection::kSpeedOfLight:
      return "GPU Speed Of Light Throughput";
    case KernelSection::kWorkload:
      return "GPU and Memory Workload Distribution";
    case KernelSection::kLaunchStatistics:
      return kLaunchStatistics;
    case KernelSection::kOccupancy:
      return kOccupancy;
    case KernelSection::kCommandLineMetrics:
      return "Command line profiler metrics";
  }
  return kOccupancy;
}

std::string finding_rule_id(FindingKind kind) {
  switch (kind) {
    case FindingKind::kCannotLaunch:
      return "cannot_launch";
    case FindingKind::kGridSmallerThanSms:
      return "grid_smaller_than_sms";
    case FindingKind::kGridBelowOneWave:
      return "grid_below_one_wave";
    case FindingKind::kTailEffect:
      return "tail_effect";
    case FindingKind::kBlockSizeNotWarpMultiple:
      return "block_size_not_warp_multiple";
    case FindingKind::kSharedMemOptIn:
      return "shared_memory_opt_in";
    case FindingKind::kTheoreticalOccupancyLimited:
      return "theoretical_occupancy_limited";
    case FindingKind::kAchievedOccupancyGap:
      return "achieved_occupancy_gap";
    case FindingKind::kSolSmallGrid:
      return "sol_small_grid";
    case FindingKind::kSolLatencyBound:
      return "sol_latency_bound";
    case FindingKind::kSolComputeHeavy:
      return "sol_compute_heavy";
    case FindingKind::kSolMemoryHeavy:
      return "sol_memory_heavy";
    case FindingKind::kSolBalanced:
      return "sol_balanced";
    case FindingKind::kSolHighThroughput:
      return "sol_high_throughput";
  }
  return "unknown";
}

std::string finding_message(const KernelFinding& f) {
  switch (f.kind) {
    case FindingKind::kCannotLaunch:
      return fmt::format(
          "This configuration cannot launch: {}. Every block limit of 0 must be "
          "lifted before occupancy means anything.",
          f.detail);
    case FindingKind::kGridSmallerThanSms:
      return fmt::format(
          "The grid of {} is smaller than the GPU's {} multiprocessors, so {} of them get no "
          "block and stay idle: up to {} of the device is unused. Unless other work runs "
          "concurrently, launch at least one block per multiprocessor: a larger grid, or the "
          "same work split into more, smaller blocks.",
          plural(f.grid_size, "block", "blocks"), f.sm_count, f.sm_count - f.grid_size,
          percent(100.0 * (f.sm_count - f.grid_size) / f.sm_count));
    case FindingKind::kGridBelowOneWave:
      return fmt::format(
          "The grid of {} blocks fills {:.1f}% of one wave: {} multiprocessors x {} blocks each "
          "= {} blocks can be resident at once (Waves Per SM {:.2f}). Up to {} of the "
          "resident-block slots stay empty; a larger grid, or smaller blocks for the same work, "
          "would use them.",
          f.grid_size, 100.0 * f.waves, f.sm_count, f.blocks_per_wave / std::max(f.sm_count, 1),
          f.blocks_per_wave, f.waves, percent(*f.est_speedup_pct));
    case FindingKind::kTailEffect:
      return fmt::format(
          "A wave is the {} blocks the GPU runs at once ({} multiprocessors x {} blocks each at "
          "this occupancy). This grid of {} blocks runs {} and a partial wave of {}; if all "
          "blocks take equally long, the partial wave may account for up to {:.1f}% of the "
          "kernel's run time. A grid of whole waves, or of many more waves, shrinks this tail.",
          f.blocks_per_wave, f.sm_count, f.blocks_per_wave / std::max(f.sm_count, 1), f.grid_size,
          plural(f.full_waves, "full wave", "full waves"),
          plural(f.partial_wave_blocks, "block", "blocks"), *f.est_speedup_pct);
    case FindingKind::kBlockSizeNotWarpMultiple: {
      int64_t masked = int64_t{f.warps_per_block} * f.warp_size - f.block_size;
      return fmt::format(
          "Threads run in warps of {}. This launch has {} threads per block, so the last of its "
          "{} has {} masked off: {:.1f}% of the lanes the block occupies do no work. Use a "
          "multiple of {} threads per block; 128 to 256 is a good range to start from.",
          f.warp_size, f.block_size, plural(f.warps_per_block, "warp", "warps"),
          plural(masked, "lane", "lanes"), *f.est_speedup_pct, f.warp_size);
    }
    case FindingKind::kSharedMemOptIn:
      return fmt::format(
          "Each block uses {} bytes of shared memory, more than the {} a kernel gets by default: "
          "it launches only after cudaFuncSetAttribute(kernel, "
          "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) raises its limit.",
          f.smem_requested, f.smem_default_max);
    case FindingKind::kTheoreticalOccupancyLimited:
      return fmt::format(
          "At this occupancy each scheduler has {:.2f} warps to issue from, below the hardware "
          "maximum of {}. The theoretical occupancy ({:.1f}%) is limited by {}.",
          f.theoretical_warps_per_scheduler, f.max_warps_per_scheduler, f.theoretical_occupancy_pct,
          limiter_words(f.limiters));
    case FindingKind::kAchievedOccupancyGap:
      return fmt::format(
          "The measured achieved occupancy ({:.1f}%) is {:.1f} points below the theoretical "
          "{:.1f}%: warp scheduling overhead or work spread unevenly, within or across blocks, "
          "leaves warp slots empty. Even out the work per warp and per block.",
          f.achieved_occupancy_pct, f.theoretical_occupancy_pct - f.achieved_occupancy_pct,
          f.theoretical_occupancy_pct);
    case FindingKind::kSolSmallGrid:
      return fmt::format(
          "This kernel grid is too small to fill the available resources on this device: {} on "
          "{} multiprocessors is only {:.2f} full waves, and Compute (SM) Throughput ({:.2f}%) "
          "and Memory Throughput ({:.2f}%) both stay below {:.0f}% of peak. Look at Launch "
          "Statistics for more details.",
          plural(f.grid_size, "block", "blocks"), f.sm_count, f.waves, f.compute_pct, f.memory_pct,
          analysis::kSolLatencyPct);
    case FindingKind::kSolLatencyBound:
      return fmt::format(
          "Compute (SM) Throughput ({:.2f}%) and Memory Throughput ({:.2f}%) are both below "
          "{:.0f}% of peak, which typically indicates latency issues. Look at Scheduler "
          "Statistics and Warp State Statistics (ncu --set full) for why warps stall.",
          f.compute_pct, f.memory_pct, analysis::kSolLatencyPct);
    case FindingKind::kSolComputeHeavy:
      return fmt::format(
          "Compute is more heavily utilized than Memory: Compute (SM) Throughput {:.2f}% against "
          "Memory Throughput {:.2f}%. Look at Compute Workload Analysis (ncu --set full) for what "
          "the compute pipelines spend their time on.",
          f.compute_pct, f.memory_pct);
    case FindingKind::kSolMemoryHeavy:
      return fmt::format(
          "Memory is more heavily utilized than Compute: Memory Throughput {:.2f}% against "
          "Compute (SM) Throughput {:.2f}%. Look at Memory Workload Analysis (ncu --set full) to "
          "find the memory bottleneck.",
          f.memory_pct, f.compute_pct);
    case FindingKind::kSolBalanced:
      return fmt::format(
          "Compute ({:.2f}%) and Memory ({:.2f}%) are well-balanced, within {:.0f} points of "
          "each other: to reduce the run time, both computation and memory traffic must shrink.",
          f.compute_pct, f.memory_pct, analysis::kSolBalancePoints);
    case FindingKind::kSolHighThroughput:
      return fmt::format(
          "The kernel uses more than {:.0f}% of the device's compute ({:.2f}%) or memory "
          "({:.2f}%) throughput: further gains need work shifted from the most utilized unit to "
          "another.",
          analysis::kSolHighPct, f.compute_pct, f.memory_pct);
  }
  return "";
}

KernelSectionsReport kernel_sections(const analysis::DeviceProps& d,
                                     const analysis::KernelLaunch& k,
                                     const analysis::OccupancyResult& r,
                                     std::vector<KernelFinding> findings) {
  KernelSectionsReport rep;
  rep.findings = std::move(findings);
  rep.metrics.columns = {{"Section Name", Align::kLeft},
                         {"Metric Name", Align::kLeft},
                         {"Metric Unit", Align::kRight},
                         {"Metric Value", Align::kRight}};
  // `metric` is ncu's raw name of the value (ncu --page raw), for JSON.
  auto add = [&](const char* section, const char* name, const std::string& unit, Cell value,
                 const char* metric) {
    rep.metrics.rows.push_back(
        {text_cell(section), text_cell(name), text_cell(unit), std::move(value)});
    rep.metric_ids.push_back(metric);
  };
  auto add_bytes = [&](const char* section, const char* name, int64_t bytes, const char* per,
                       const char* metric) {
    auto [v, unit] = scaled_bytes(bytes, per);
    add(section, name, unit, value_cell(v), metric);
  };

  if (k.grid_size) {
    rep.launch_statistics = true;
    const char* s = kLaunchStatistics;
    add(s, "Block Size", "", value_cell(k.block_size), "launch__block_size");
    if (!k.cache_config.empty())
      add(s, "Function Cache Configuration", "", text_cell(k.cache_config),
          "launch__func_cache_config");
    add(s, "Grid Size", "", value_cell(static_cast<double>(*k.grid_size)), "launch__grid_size");
    add(s, "Registers Per Thread", "register/thread", value_cell(k.registers_per_thread),
        "launch__registers_per_thread");
    add_bytes(s, "Shared Memory Configuration Size", r.smem_config, "",
              "launch__shared_mem_config_size");
    add_bytes(s, "Driver Shared Memory Per Block", r.reserved_smem_per_block, "/block",
              "launch__shared_mem_per_block_driver");
    add_bytes(s, "Dynamic Shared Memory Per Block", k.dynamic_smem, "/block",
              "launch__shared_mem_per_block_dynamic");
    add_bytes(s, "Static Shared Memory Per Block", k.static_smem, "/block",
              "launch__shared_mem_per_block_static");
    add(s, "# SMs", "SM", value_cell(d.sm_count), "launch__sm_count");
    if (r.threads) {
      add(s, "Threads", "thread", value_cell(static_cast<double>(*r.threads)),
          "launch__thread_count");
    }
    if (r.waves)
      add(s, "Waves Per SM", "", value_cell(*r.waves), "launch__waves_per_multiprocessor");
  }

  const char* s = kOccupancy;
  if (r.limit_barriers_shown)
    add(s, "Block Limit Barriers", "block", value_cell(*r.limit_barriers_shown),
        "launch__occupancy_limit_barriers");
  add(s, "Block Limit SM", "block", value_cell(r.limit_blocks), "launch__occupancy_limit_blocks");
  add(s, "Block Limit Registers", "block", value_cell(shown_limit(r.limit_registers, r)),
      "launch__occupancy_limit_registers");
  add(s, "Block Limit Shared Mem", "block", value_cell(shown_limit(r.limit_shared_mem, r)),
      "launch__occupancy_limit_shared_mem");
  add(s, "Block Limit Warps", "block", value_cell(r.limit_warps), "launch__occupancy_limit_warps");
  add(s, "Theoretical Active Warps per SM", "warp", value_cell(r.active_warps),
      "sm__maximum_warps_avg_per_active_cycle");
  add(s, "Theoretical Occupancy", "%", value_cell(r.occupancy_pct),
      "sm__maximum_warps_per_active_cycle_pct");
  if (k.achieved_occupancy_pct) {
    add(s, "Achieved Occupancy", "%", value_cell(*k.achieved_occupancy_pct),
        "sm__warps_active.avg.pct_of_peak_sustained_active");
  }
  if (k.achieved_active_warps) {
    add(s, "Achieved Active Warps Per SM", "warp", value_cell(*k.achieved_active_warps),
        "sm__warps_active.avg.per_cycle_active");
  }
  return rep;
}

std::string render_kernel_sections(const KernelSectionsReport& rep, Format format) {
  if (format == Format::kCsv) return render(rep.metrics, Format::kCsv);
  if (format == Format::kJson) {
    std::string metrics = render(rep.metrics, Format::kJson);
    std::string findings = render(findings_table(rep.findings), Format::kJson);
    while (!metrics.empty() && metrics.back() == '\n') metrics.pop_back();
    while (!findings.empty() && findings.back() == '\n') findings.pop_back();
    return "{\n\"metrics\": " + metrics + ",\n\"findings\": " + findings + "\n}\n";
  }
  std::string out;
  for (const char* section : {kLaunchStatistics, kOccupancy}) {
    std::vector<const std::vector<Cell>*> rows;
    for (const auto& row : rep.metrics.rows) {
      if (row[0].text == section) rows.push_back(&row);
    }
    if (rows.empty()) continue;
    out += render_section(section, rows);
    out += "\n";
    for (const auto& f : rep.findings) {
      if (section_name(f.section) != section) continue;
      out += render_finding(f);
      out += "\n";
    }
  }
  return out;
}

std::string kernel_header_line(const std::string& name, const analysis::DeviceProps& d,
                               const analysis::KernelLaunch& k) {
  std::string grid = k.grid_size ? fmt::format("({}, 1, 1)", *k.grid_size) : "(?, 1, 1)";
  return fmt::format("  {} {}x({}, 1, 1), Device {}, CC {}.{}\n", printable(name), grid,
                     k.block_size, printable(d.name), d.cc_major, d.cc_minor);
}

std::vector<std::string> findings_text(const KernelSectionsReport& rep) {
  std::vector<std::string> out;
  for (const auto& f : rep.findings) {
    std::string est = estimate_label(f);
    out.push_back(fmt::format("{} {}: {}{}", severity_name(f.severity), section_name(f.section),
                              est.empty() ? "" : est + ". ", finding_message(f)));
  }
  return out;
}

}  // namespace strata::report
