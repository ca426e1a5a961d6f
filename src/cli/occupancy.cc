// `strata occupancy --gpu NAME --block-size B --registers R [...]`: the
// occupancy calculator, offline. Prints Nsight Compute's Launch Statistics
// (with --grid) and Occupancy sections for a launch configuration on a known
// GPU, and the guidance that applies, so what-if questions (fewer registers?
// smaller blocks? more shared memory?) need no device and no profile.
#include "analysis/occupancy.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "analysis/gpu_specs.h"
#include "analysis/launch_rules.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "report/kernel_sections.h"

namespace strata::cli {
namespace {

struct OccupancyOptions {
  std::string gpu;
  std::string block_size;
  int registers = -1;
  std::string smem_static = "0";
  std::string smem_dynamic = "0";
  std::string smem_config;
  std::string grid;
  std::optional<int> barriers;
  std::optional<int> sms;
  std::optional<double> achieved_occupancy;
  std::optional<double> achieved_warps;
  std::string format = "table";
};

// "49152", "48K", "48KB", "48KiB" (K = 1024), "1M": bytes.
Result<int64_t> parse_size(const std::string& flag, const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (size_t j = i; j < text.size(); ++j) {
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[j])));
  }
  int64_t scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  if (unit == "k" || unit == "kb" || unit == "kib") scale = 1024;
  if (unit == "m" || unit == "mb" || unit == "mib") scale = 1024 * 1024;
  if (i == 0 || i > 12 || scale == 0) {
    return make_error(flag + " '" + printable(text) +
                      "' is not a size (bytes, or with K or M for 1024 and 1024^2: 48K)");
  }
  return std::stoll(text.substr(0, i)) * scale;
}

// Far more SMs than any GPU has; keeps the model's products in range.
constexpr int kMaxSms = 1 << 20;

// Whether a measured number read as double is a number at all: CLI11 reads
// "nan" and "inf" as doubles, and NaN passes every range comparison.
bool finite_in(double value, double low, double high) {
  return std::isfinite(value) && value >= low && value <= high;
}

// "256", "16x16", "16,16,1": the product of the dimensions.
Result<int64_t> parse_dims(const std::string& flag, const std::string& text) {
  int64_t product = 1;
  int dims = 0;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find_first_of("x,", i);
    if (j == std::string::npos) j = text.size();
    std::string part = text.substr(i, j - i);
    bool digits = !part.empty() && part.size() <= 10 &&
                  part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || ++dims > 3) {
      return make_error(flag + " '" + printable(text) + "' is not a count or X,Y,Z dimensions");
    }
    // Three 10-digit parts overflow int64: refuse rather than wrap.
    if (__builtin_mul_overflow(product, std::stoll(part), &product)) {
      return make_error(flag + " '" + printable(text) + "' is too large");
    }
    i = j + 1;
  }
  return product;
}

int run_occupancy(const OccupancyOptions& opt) {
  auto format = report::parse_format(opt.format);
  if (!format) return print_usage_error(format.error().message);
  auto device = analysis::find_gpu(opt.gpu);
  if (!device) return print_usage_error("--gpu: " + device.error().message);
  if (opt.sms) {
    if (*opt.sms < 1 || *opt.sms > kMaxSms) {
      return print_usage_error(fmt::format("--sms must be from 1 to {}, is {}", kMaxSms, *opt.sms));
    }
    device->sm_count = *opt.sms;
  }

  analysis::KernelLaunch launch;
  auto block = parse_dims("--block-size", opt.block_size);
  if (!block) return print_usage_error(block.error().message);
  if (*block < 1 || *block > (1 << 30)) {
    return print_usage_error("--block-size must be at least 1 thread, is " +
                             printable(opt.block_size));
  }
  launch.block_size = static_cast<int>(*block);
  if (opt.registers < 0) return print_usage_error("--registers must not be negative");
  launch.registers_per_thread = opt.registers;
  auto smem_static = parse_size("--smem-static", opt.smem_static);
  if (!smem_static) return print_usage_error(smem_static.error().message);
  launch.static_smem = *smem_static;
  auto smem_dynamic = parse_size("--smem-dynamic", opt.smem_dynamic);
  if (!smem_dynamic) return print_usage_error(smem_dynamic.error().message);
  launch.dynamic_smem = *smem_dynamic;
  if (!opt.smem_config.empty()) {
    auto config = parse_size("--smem-config", opt.smem_config);
    if (!config) return print_usage_error(config.error().message);
    launch.smem_config = *config;
  }
  if (!opt.grid.empty()) {
    auto grid = parse_dims("--grid", opt.grid);
    if (!grid) return print_usage_error(grid.error().message);
    if (*grid < 1) {
      return print_usage_error("--grid must be at least 1 block, is " + printable(opt.grid));
    }
    // The model counts the launch's threads in 64 bits.
    int64_t threads = 0;
    if (__builtin_mul_overflow(*grid, *block, &threads)) {
      return print_usage_error("--grid " + printable(opt.grid) + " of blocks of " +
                               printable(opt.block_size) +
                               " threads: more threads than fit in 64 bits");
    }
    launch.grid_size = *grid;
  }
  if (opt.barriers && *opt.barriers < 0)
    return print_usage_error("--barriers must not be negative");
  launch.barriers = opt.barriers;
  if (opt.achieved_occupancy && !finite_in(*opt.achieved_occupancy, 0, 100)) {
    return print_usage_error(fmt::format(
        "--achieved-occupancy must be a percentage from 0 to 100, is {}", *opt.achieved_occupancy));
  }
  launch.achieved_occupancy_pct = opt.achieved_occupancy;
  if (opt.achieved_warps && !finite_in(*opt.achieved_warps, 0, device->max_warps_per_sm)) {
    return print_usage_error(
        fmt::format("--achieved-warps must be from 0 to {} (the warps an SM of {} holds), is {}",
                    device->max_warps_per_sm, printable(device->name), *opt.achieved_warps));
  }
  launch.achieved_active_warps = opt.achieved_warps;

  auto occupancy = analysis::compute_occupancy(*device, launch);
  if (!occupancy) return print_usage_error(occupancy.error().message);
  if (occupancy->smem_config_raised) {
    std::fprintf(stderr,
                 "strata: --smem-config %s cannot hold one block of %lld bytes; the driver "
                 "uses %lld bytes instead\n",
                 opt.smem_config.c_str(), static_cast<long long>(occupancy->smem_per_block),
                 static_cast<long long>(occupancy->smem_config));
  }
  auto findings = analysis::launch_findings(*device, launch, *occupancy);
  auto rep = report::kernel_sections(*device, launch, *occupancy, std::move(findings));

  std::string text;
  if (*format == report::Format::kTable) {
    text = report::kernel_header_line("what-if", *device, launch);
  }
  text += report::render_kernel_sections(rep, *format);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (*format == report::Format::kCsv) {
    for (const auto& line : report::findings_text(rep)) {
      std::fprintf(stderr, "strata: %s\n", line.c_str());
    }
  }
  return kExitOk;
}

}  // namespace

VerbRunner add_occupancy(CLI::App& app) {
  auto opt = std::make_shared<OccupancyOptions>();
  auto* sub = app.add_subcommand(
      "occupancy", "Occupancy calculator: ncu's Launch Statistics and Occupancy for a launch");
  sub->add_option("--gpu", opt->gpu, "GPU by architecture or name: " + analysis::known_gpu_names())
      ->required();
  sub->add_option("--block-size", opt->block_size, "Threads per block (256, or 16x16)")->required();
  sub->add_option("--registers", opt->registers, "Registers per thread")->required();
  sub->add_option("--smem-static", opt->smem_static,
                  "Static shared memory per block in bytes (or 12K)");
  sub->add_option("--smem-dynamic", opt->smem_dynamic,
                  "Dynamic shared memory per block in bytes (or 6K)");
  sub->add_option("--smem-config", opt->smem_config,
                  "Shared memory configuration (carveout) in bytes or KB (100K); default: the "
                  "driver's choice as predicted");
  sub->add_option("--grid", opt->grid, "Blocks in the grid (132, or 16,8): adds Launch Statistics");
  sub->add_option("--barriers", opt->barriers, "Barriers per block (sm_90+; default 1)");
  sub->add_option("--sms", opt->sms, "Override the GPU's number of SMs");
  sub->add_option("--achieved-occupancy", opt->achieved_occupancy,
                  "A measured Achieved Occupancy (%) to compare with the theoretical");
  sub->add_option("--achieved-warps", opt->achieved_warps,
                  "A measured Achieved Active Warps Per SM");
  sub->add_option("--format", opt->format, "table, csv or json");
  return [opt] { return run_occupancy(*opt); };
}

}  // namespace strata::cli
