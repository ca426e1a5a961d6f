#include "analysis/kernel_profile.h"

#include <cmath>
#include <string_view>

#include "analysis/gpu_specs.h"
#include "analysis/sol_rules.h"
#include "store/kernel_names.h"

namespace strata::analysis {
namespace {

// A whole, non-negative value that fits an int, or nothing: a damaged or
// absurd attribute must not reach the model as a limit.
std::optional<int> as_count(const KernelProfile& p, const std::string& name) {
  auto v = p.metric(name);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 2e9 || *v != std::floor(*v)) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<int64_t> as_size(const KernelProfile& p, const std::string& name) {
  auto v = p.metric(name);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 9e15 || *v != std::floor(*v)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// The GPU table's entry for the compute capability, then each attribute the
// device reported over it.
std::optional<DeviceProps> device_limits(const KernelProfile& p, bool* from_attributes) {
  auto major = as_count(p, "device__attribute_compute_capability_major");
  auto minor = as_count(p, "device__attribute_compute_capability_minor");
  auto sms = as_count(p, "device__attribute_multiprocessor_count");
  std::optional<DeviceProps> d;
  if (major && minor) {
    auto known = find_gpu("sm_" + std::to_string(*major) + std::to_string(*minor));
    if (known) d = *known;
  }
  if (!d && !(major && minor && sms)) return std::nullopt;
  if (!d) {
    d = DeviceProps{};
    d->cc_major = *major;
    d->cc_minor = *minor;
  }
  *from_attributes = sms.has_value() && major.has_value();
  if (sms) d->sm_count = *sms;
  if (auto v = as_count(p, "device__attribute_warp_size"); v && *v > 0) d->warp_size = *v;
  if (auto v = as_count(p, "device__attribute_max_threads_per_multiprocessor"); v && *v > 0) {
    d->max_threads_per_sm = *v;
  }
  if (d->warp_size > 0) d->max_warps_per_sm = d->max_threads_per_sm / d->warp_size;
  if (auto v = as_count(p, "device__attribute_max_blocks_per_multiprocessor"); v && *v > 0) {
    d->max_blocks_per_sm = *v;
  }
  if (auto v = as_count(p, "device__attribute_max_registers_per_multiprocessor"); v && *v > 0) {
    d->regs_per_sm = *v;
  }
  if (auto v = as_size(p, "device__attribute_max_shared_memory_per_multiprocessor"); v && *v > 0) {
    d->smem_per_sm = *v;
    // The table's carveouts stop at its own maximum; a device that reports
    // more (or less) keeps only those it can hold, and its maximum.
    std::vector<int64_t> carveouts;
    for (int64_t c : d->smem_carveouts) {
      if (c < *v) carveouts.push_back(c);
    }
    carveouts.push_back(*v);
    d->smem_carveouts = std::move(carveouts);
  }
  if (auto v = as_size(p, "device__attribute_max_shared_memory_per_block_optin"); v && *v > 0) {
    d->smem_per_block_optin = *v;
  }
  if (auto v = as_size(p, "device__attribute_reserved_shared_memory_per_block")) {
    d->reserved_smem_per_block = *v;
  }
  if (d->smem_carveouts.empty() && d->smem_per_sm > 0) d->smem_carveouts = {d->smem_per_sm};
  if (d->smem_per_block_optin == 0) d->smem_per_block_optin = d->smem_per_sm;
  return d;
}

std::array<int64_t, 3> dims(const KernelProfile& p, const char* prefix) {
  std::array<int64_t, 3> out{0, 0, 0};
  const char* axes[] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (auto v = as_size(p, std::string(prefix) + axes[i])) out[i] = *v;
  }
  return out;
}

}  // namespace

std::optional<double> KernelProfile::metric(const std::string& name) const {
  auto it = metrics.find(name);
  if (it == metrics.end()) return std::nullopt;
  return it->second;
}

KernelProfile analyze_profiled_launch(const store::ProfiledLaunch& launch) {
  KernelProfile p;
  p.launch = launch;
  p.demangled = store::kernel_names(launch.kernel_name).demangled;
  for (const auto& [name, value] : launch.metrics) p.metrics[name] = value;
  p.grid = dims(p, "launch__grid_dim_");
  p.block = dims(p, "launch__block_dim_");
  p.context_id = as_size(p, "launch__context_id");
  p.stream_id = as_size(p, "launch__stream_id");
  p.device = device_limits(p, &p.device_from_attributes);

  std::optional<int64_t> block_size = as_size(p, "launch__block_size");
  if (!block_size && p.block[0] > 0)
    block_size = p.block[0] * std::max<int64_t>(p.block[1], 1) * std::max<int64_t>(p.block[2], 1);
  std::optional<int64_t> grid_size = as_size(p, "launch__grid_size");
  if (!grid_size && p.grid[0] > 0)
    grid_size = p.grid[0] * std::max<int64_t>(p.grid[1], 1) * std::max<int64_t>(p.grid[2], 1);
  if (block_size && *block_size > 0 && *block_size <= (1 << 30)) {
    KernelLaunch k;
    k.block_size = static_cast<int>(*block_size);
    k.registers_per_thread = as_count(p, "launch__registers_per_thread").value_or(0);
    k.static_smem = as_size(p, "launch__shared_mem_per_block_static").value_or(0);
    k.dynamic_smem = as_size(p, "launch__shared_mem_per_block_dynamic").value_or(0);
    if (grid_size && *grid_size > 0) k.grid_size = *grid_size;
    if (auto c = as_size(p, "launch__shared_mem_config_size"); c && *c > 0) k.smem_config = *c;
    k.achieved_occupancy_pct = p.metric("sm__warps_active.avg.pct_of_peak_sustained_active");
    k.achieved_active_warps = p.metric("sm__warps_active.avg.per_cycle_active");
    p.kernel = k;
  }

  if (!p.device) {
    p.occupancy_error =
        "no device limits (no device__attribute_* values, unknown compute capability)";
  } else if (!p.kernel) {
    p.occupancy_error = "no block size (launch__block_size) was recorded";
  } else if (auto st = validate(*p.device); !st) {
    p.occupancy_error = st.error().message;
  } else {
    auto occ = compute_occupancy(*p.device, *p.kernel);
    if (!occ) {
      // A configuration the table does not know (a driver-chosen carveout
      // off the list): the model's own choice still gives the limits.
      KernelLaunch without = *p.kernel;
      without.smem_config.reset();
      occ = compute_occupancy(*p.device, without);
    }
    if (occ) {
      p.occupancy = *occ;
    } else {
      p.occupancy_error = occ.error().message;
    }
  }

  auto compute = p.metric("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  auto memory = p.metric("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  if (compute && memory) {
    std::optional<double> waves = p.occupancy ? p.occupancy->waves : std::nullopt;
    int sms = p.device ? p.device->sm_count : 0;
    p.findings.push_back(
        sol_finding(*compute, *memory, waves, p.kernel ? p.kernel->grid_size.value_or(0) : 0, sms));
  }
  if (p.occupancy) {
    for (auto& f : launch_findings(*p.device, *p.kernel, *p.occupancy)) p.findings.push_back(f);
  }
  return p;
}

std::string profile_status_name(int64_t status) {
  // CUptiResult values of cupti_result.h (CUDA 13.0); numbers are ABI and
  // never reused, so a table here keeps analysis free of CUDA headers.
  struct Name {
    int64_t value;
    const char* name;
  };
  static constexpr Name kCupti[] = {
      {0, "CUPTI_SUCCESS"},
      {1, "CUPTI_ERROR_INVALID_PARAMETER"},
      {2, "CUPTI_ERROR_INVALID_DEVICE"},
      {3, "CUPTI_ERROR_INVALID_CONTEXT"},
      {7, "CUPTI_ERROR_INVALID_OPERATION"},
      {8, "CUPTI_ERROR_OUT_OF_MEMORY"},
      {9, "CUPTI_ERROR_HARDWARE"},
      {10, "CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT"},
      {11, "CUPTI_ERROR_API_NOT_IMPLEMENTED"},
      {12, "CUPTI_ERROR_MAX_LIMIT_REACHED"},
      {13, "CUPTI_ERROR_NOT_READY"},
      {14, "CUPTI_ERROR_NOT_COMPATIBLE"},
      {15, "CUPTI_ERROR_NOT_INITIALIZED"},
      {17, "CUPTI_ERROR_INVALID_METRIC_NAME"},
      {19, "CUPTI_ERROR_INVALID_HANDLE"},
      {26, "CUPTI_ERROR_HARDWARE_BUSY"},
      {27, "CUPTI_ERROR_NOT_SUPPORTED"},
      {33, "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED"},
      {35, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"},
      {36, "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED"},
      {38, "CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED"},
      {39, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
      // The agent's privilege and unsupported-device errors (docs/agent.md, "Faults").
      {40, "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES"},
      {41, "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED"},
      {42, "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED"},
      {43, "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED"},
      {44, "CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED"},
      {45, "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED"},
      {46, "CUPTI_ERROR_INVALID_CHIP_NAME"},
      {999, "CUPTI_ERROR_UNKNOWN"},
  };
  constexpr int64_t kDriverBase = 1'000'000;
  if (status >= kDriverBase) return "CUresult " + std::to_string(status - kDriverBase);
  for (const Name& n : kCupti) {
    if (n.value == status) return n.name;
  }
  return "CUptiResult " + std::to_string(status);
}

std::vector<KernelProfile> analyze_profiled_launches(
    const std::vector<store::ProfiledLaunch>& launches) {
  std::vector<KernelProfile> out;
  out.reserve(launches.size());
  for (const auto& launch : launches) out.push_back(analyze_profiled_launch(launch));
  return out;
}

}  // namespace strata::analysis
