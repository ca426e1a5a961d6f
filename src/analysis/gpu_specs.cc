#include "analysis/gpu_specs.h"

#include <cctype>

namespace strata::analysis {
namespace {

constexpr int64_t kKiB = 1024;

// Sources of the per-architecture numbers:
//  [PG]  CUDA C++ Programming Guide, "Compute Capabilities", table "Technical
//        Specifications per Compute Capability": max resident blocks, warps
//        and threads per SM, 64 K 32-bit registers per SM and per block, 255
//        registers per thread, max shared memory per SM and per block
//        (opt-in), 48 KB per block without opt-in; and its per-architecture
//        sections (and the Volta/Turing/Ampere/Hopper/Blackwell tuning
//        guides) for the supported shared-memory capacities (carveouts).
//  [OCC] cuda_occupancy.h (CUDA 11-13): register allocation unit 256 per
//        warp, 4 sub-partitions, shared memory allocation granularity 256 B on
//        sm_7x and 128 B from sm_80, the driver's per-block reserve from sm_80
//        (cudaDeviceProp::reservedSharedMemPerBlock = 1024), the carveout
//        tables of cudaOccAlignUpShmemSizeVoltaPlus.
//  [NCU] shared/reference/ncu-metrics.md (Nsight Compute on the H200,
//        cuda_occupancy.h of CUDA 13.0): the sm_90 numbers, and barriers:
//        "Block Limit Barriers" = floor(64 / barriers per block) on sm_90+.
//        That sm_100 has the same 64 is inferred from Nsight Compute output
//        on B200 (Block Limit Barriers 9 for a CUTLASS kernel, 32 for plain
//        ones), not from a document.
// SM counts are product facts, from NVIDIA's architecture whitepapers and
// datasheets; the H200's 132 is also what Nsight Compute reports on the
// test machine (shared/reference/anchor-figures.md).

DeviceProps arch(int major, int minor, int max_warps, int max_blocks, int64_t smem_per_sm_kib,
                 int64_t optin_kib, std::vector<int64_t> carveouts_kib) {
  DeviceProps d;
  d.cc_major = major;
  d.cc_minor = minor;
  d.max_warps_per_sm = max_warps;
  d.max_threads_per_sm = max_warps * d.warp_size;
  d.max_blocks_per_sm = max_blocks;
  d.smem_per_sm = smem_per_sm_kib * kKiB;
  d.smem_per_block_optin = optin_kib * kKiB;
  for (int64_t c : carveouts_kib) d.smem_carveouts.push_back(c * kKiB);
  if (major >= 8) {
    d.reserved_smem_per_block = 1 * kKiB;  // [OCC]
    d.smem_alloc_granularity = 128;        // [OCC]
  } else {
    d.reserved_smem_per_block = 0;
    d.smem_alloc_granularity = 256;  // [OCC]
  }
  if (major >= 9) d.barriers_per_sm = 64;  // [NCU]
  return d;
}

// [PG] table columns 7.0, 7.5, 8.0, 8.6, 8.9, 9.0, 10.0.
DeviceProps sm70() {
  // Volta: 96 KB per SM; carveouts 0, 8, 16, 32, 64, 96 KB.
  return arch(7, 0, 64, 32, 96, 96, {0, 8, 16, 32, 64, 96});
}
DeviceProps sm75() {
  // Turing: 32 warps and 16 blocks per SM, 64 KB; carveouts 32 or 64 KB.
  return arch(7, 5, 32, 16, 64, 64, {32, 64});
}
DeviceProps sm80() {
  // A100: 164 KB per SM, 163 KB per block; carveouts up to 164 KB.
  return arch(8, 0, 64, 32, 164, 163, {0, 8, 16, 32, 64, 100, 132, 164});
}
DeviceProps sm86() {
  // GA10x: 48 warps, 16 blocks, 100 KB per SM, 99 KB per block.
  return arch(8, 6, 48, 16, 100, 99, {0, 8, 16, 32, 64, 100});
}
DeviceProps sm89() {
  // Ada: 48 warps, 24 blocks, 100 KB per SM, 99 KB per block.
  return arch(8, 9, 48, 24, 100, 99, {0, 8, 16, 32, 64, 100});
}
DeviceProps sm90() {
  // Hopper: 64 warps, 32 blocks, 228 KB per SM, 227 KB per block.
  return arch(9, 0, 64, 32, 228, 227, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228});
}
DeviceProps sm100() {
  // Blackwell datacenter: as Hopper (64 warps, 32 blocks, 228 KB per SM,
  // 227 KB per block; the Blackwell tuning guide lists the same carveouts).
  return arch(10, 0, 64, 32, 228, 227, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228});
}

DeviceProps product(DeviceProps d, std::string name, int sm_count) {
  d.name = std::move(name);
  d.sm_count = sm_count;
  return d;
}

std::vector<GpuSpec> make_table() {
  return {
      // An architecture stands for its first datacenter part.
      {"sm_70", product(sm70(), "sm_70 (as Tesla V100-SXM2)", 80)},
      {"sm_75", product(sm75(), "sm_75 (as Tesla T4)", 40)},
      {"sm_80", product(sm80(), "sm_80 (as A100)", 108)},
      {"sm_86", product(sm86(), "sm_86 (as A10)", 72)},
      {"sm_89", product(sm89(), "sm_89 (as L4)", 58)},
      {"sm_90", product(sm90(), "sm_90 (as H100 SXM)", 132)},
      {"sm_100", product(sm100(), "sm_100 (as B200)", 148)},
      // Volta whitepaper: 80 SMs on Tesla V100.
      {"v100", product(sm70(), "Tesla V100-SXM2", 80)},
      // Turing whitepaper / T4 datasheet: 40 SMs (2560 CUDA cores).
      {"t4", product(sm75(), "Tesla T4", 40)},
      // Ampere (GA100) whitepaper: 108 SMs on A100.
      {"a100", product(sm80(), "A100", 108)},
      // GA102 whitepaper: 82 SMs on the RTX 3090; A10: 72 SMs (9216 cores).
      {"rtx3090", product(sm86(), "GeForce RTX 3090", 82)},
      {"a10", product(sm86(), "A10", 72)},
      // Ada whitepaper: 128 SMs on the RTX 4090; L4: 58 SMs (7424 cores).
      {"rtx4090", product(sm89(), "GeForce RTX 4090", 128)},
      {"l4", product(sm89(), "L4", 58)},
      // Hopper whitepaper: 132 SMs on H100 SXM5, 114 on H100 PCIe; H200
      // (SXM) has the H100 SXM's GH100 configuration: 132.
      {"h100", product(sm90(), "H100 SXM", 132)},
      {"h100-pcie", product(sm90(), "H100 PCIe", 114)},
      {"h200", product(sm90(), "H200", 132)},
      // Blackwell: 148 SMs on B200 (two dies of 74).
      {"b200", product(sm100(), "B200", 148)},
  };
}

// "SM_90", "sm90", "H100 PCIe" -> "sm90", "h100pcie".
std::string normalize(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

const std::vector<GpuSpec>& known_gpus() {
  static const std::vector<GpuSpec> table = make_table();
  return table;
}

std::string known_gpu_names() {
  std::string out;
  for (const auto& spec : known_gpus()) out += (out.empty() ? "" : ", ") + spec.key;
  return out;
}

Result<DeviceProps> find_gpu(std::string_view name) {
  std::string want = normalize(name);
  for (const auto& spec : known_gpus()) {
    if (!want.empty() && normalize(spec.key) == want) return spec.props;
  }
  return make_error("unknown GPU '" + std::string(name) + "' (known: " + known_gpu_names() + ")");
}

}  // namespace strata::analysis
