// The occupancy model: how many blocks of a kernel an SM holds at once, which
// resource stops it at that number, and how many waves a grid takes. It
// computes what cudaOccupancyMaxActiveBlocksPerMultiprocessor (cuda_occupancy.h,
// cudaOccMaxActiveBlocksPerMultiprocessor), the CUDA Occupancy Calculator
// spreadsheet and the Occupancy section of Nsight Compute compute, from kernel
// attributes (block size, registers, shared memory, barriers) and device
// properties. The device properties come from gpu_specs.h for offline what-if
// questions and, later, from the real device as the CUPTI agent records it.
//
// Pure functions: no I/O, no formatting (report/kernel_sections.h prints).
//
// The rules, as cuda_occupancy.h (CUDA 11-13) states them:
//  - warps per block W = ceil(block size / warp size); the warp limit is
//    floor(max threads per SM / warp size / W), 0 above max threads per block.
//  - registers are allocated per warp, rounded up to the allocation unit
//    (256), and per SM sub-partition: an SM of 4 sub-partitions holds
//    4 x floor((registers per SM / 4) / registers per warp) warps, which is the
//    spreadsheet's "floor(registers per SM / registers per warp) rounded down
//    to the warp allocation granularity (4)". The launch fails (limit 0) when
//    the block needs more than registers per block, counting its warps both as
//    they are and rounded up to the sub-partition count (the hardware check),
//    or more than 255 registers per thread. 0 registers: no register limit.
//  - shared memory per block = static + dynamic + the driver's reserve (1 KB
//    on sm_80+), rounded up to the allocation granularity; the limit is
//    floor(configured shared memory per SM / that). The launch fails when a
//    block needs more than the opt-in maximum per block (+ the reserve).
//  - barriers (sm_90+, Nsight Compute's "Block Limit Barriers"):
//    floor(barriers per SM / barriers per block).
//  - active blocks = the smallest limit; the limiting resources are those
//    whose limit equals it (shared memory with a predicted carveout only
//    where even the largest carveout holds no more blocks: the predicted one
//    is by construction just large enough).
//
// The shared-memory configuration (the carveout) is the driver's choice at
// launch; Nsight Compute reports the one it made. Without one given, the
// model picks the smallest supported carveout at which shared memory does not
// lower occupancy below what the other limits allow (the largest one when
// none does). That reproduces what Nsight Compute reports for kernels without
// a carveout preference in the recorded outputs we checked (seed tutorial on
// sm_86: 64 KB for 2 blocks x 17.5 KB, 100 KB for 33 KB blocks; 8 KB, 16 KB
// on other sm_86/sm_89 runs), but the driver may keep a larger configuration
// (it avoids switching back and forth; a library may set a preference): runs
// on sm_90 report 32 KB where 8 KB would do. The number of active blocks does
// not depend on which of these the driver picks, only "Block Limit Shared
// Mem" does; pass the measured configuration to reproduce it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace strata::analysis {

// What the occupancy model needs to know about a device. Sizes in bytes.
struct DeviceProps {
  std::string name;  // "NVIDIA H200"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 0;
  int max_warps_per_sm = 0;  // max_threads_per_sm / warp_size
  int max_blocks_per_sm = 0;
  int regs_per_sm = 65536;
  int regs_per_block = 65536;
  int max_regs_per_thread = 255;
  int reg_alloc_unit = 256;  // registers per warp are rounded up to a multiple of this
  // Registers are allocated to warps per SM sub-partition; the number of
  // sub-partitions (also the warp schedulers per SM).
  int warp_alloc_granularity = 4;
  int64_t smem_per_sm = 0;              // the largest carveout
  int64_t smem_per_block = 48 * 1024;   // per block without the opt-in attribute
  int64_t smem_per_block_optin = 0;     // with cudaFuncAttributeMaxDynamicSharedMemorySize
  int64_t reserved_smem_per_block = 0;  // the driver's reserve (1 KB on sm_80+)
  int smem_alloc_granularity = 128;     // 256 on sm_7x, 128 on sm_80+
  std::vector<int64_t> smem_carveouts;  // supported configurations, ascending
  int barriers_per_sm = 0;              // 0: no barrier limit modelled (before sm_90)
};

// Checks the properties the model divides by or compares against; the
// message names the first field at fault.
Status validate(const DeviceProps& device);

// One launch of one kernel, as its attributes and launch configuration give it.
struct KernelLaunch {
  int block_size = 0;  // threads per block, blockDim.x * y * z
  int registers_per_thread = 0;
  int64_t static_smem = 0;   // bytes per block (cudaFuncAttributes::sharedSizeBytes)
  int64_t dynamic_smem = 0;  // bytes per block (the launch's sharedMemBytes)
  // Barriers per block; unset: 1 (the one __syncthreads uses).
  std::optional<int> barriers;
  std::optional<int64_t> grid_size;  // blocks; needed for waves
  // The shared-memory configuration in bytes, when known (a profile's
  // launch__shared_mem_config_size, or a what-if); unset: the driver's choice
  // as the model predicts it (see above).
  std::optional<int64_t> smem_config;
  // The function's cache configuration ("CachePreferNone"), when known.
  std::string cache_config;
  // Measured values (Achieved Occupancy in %, Achieved Active Warps Per SM),
  // when a profile has them.
  std::optional<double> achieved_occupancy_pct;
  std::optional<double> achieved_active_warps;
};

// Limiting resources, a bit set; the names of cuda_occupancy.h's
// cudaOccLimitingFactor plus barriers.
enum OccupancyLimiter : unsigned {
  kLimitWarps = 1u << 0,
  kLimitRegisters = 1u << 1,
  kLimitSharedMem = 1u << 2,
  kLimitBlocks = 1u << 3,  // the SM's block limit
  kLimitBarriers = 1u << 4,
};

inline constexpr int kUnlimited = INT32_MAX;

struct OccupancyResult {
  int warps_per_block = 0;
  int regs_per_warp = 0;       // allocated: rounded up to the unit
  int regs_per_block = 0;      // regs_per_warp x warps_per_block
  int64_t smem_per_block = 0;  // allocated: static + dynamic + reserve, rounded up
  int64_t reserved_smem_per_block = 0;
  int64_t smem_config = 0;            // the carveout the limit uses
  bool smem_config_predicted = true;  // false: given in KernelLaunch
  // The given configuration could not hold one block, so (as the driver
  // does) the smallest one that can was used instead.
  bool smem_config_raised = false;
  bool needs_smem_optin = false;  // static + dynamic exceeds smem_per_block

  // Block limits; kUnlimited where the resource imposes none (0 registers,
  // no shared memory before sm_80, 0 barriers).
  int limit_blocks = 0;      // Block Limit SM
  int limit_registers = 0;   // Block Limit Registers
  int limit_shared_mem = 0;  // Block Limit Shared Mem
  int limit_warps = 0;       // Block Limit Warps
  // Block Limit Barriers, when the device has a barrier limit: uncapped, and
  // as Nsight Compute shows it, at most the SM's block limit (it shows 32 on
  // sm_90 for kernels with one barrier).
  std::optional<int> limit_barriers;
  std::optional<int> limit_barriers_shown;

  int active_blocks = 0;     // per SM; 0: the launch cannot run
  int active_warps = 0;      // Theoretical Active Warps per SM
  double occupancy_pct = 0;  // Theoretical Occupancy: active warps / max warps x 100
  unsigned limiters = 0;     // OccupancyLimiter bits whose limit is active_blocks
  // Why active_blocks is 0, naming the resource and the numbers; else empty.
  std::string launch_error;

  // With a grid size: Threads, and Waves Per SM = grid / (active blocks x SMs).
  std::optional<int64_t> threads;
  std::optional<double> waves;
};

// Errors: inputs that no launch can have (block size < 1, negative registers
// or shared memory, a configuration the device does not support) and invalid
// device properties. A launch that exceeds a limit is not an error: it gets
// active_blocks 0 and launch_error.
Result<OccupancyResult> compute_occupancy(const DeviceProps& device, const KernelLaunch& launch);

// The shared-memory configuration the model predicts for a launch whose
// other limits allow `target_blocks` per SM: the smallest carveout holding
// that many blocks of `smem_per_block` bytes, the largest if none does.
int64_t predict_smem_config(const DeviceProps& device, int64_t smem_per_block, int target_blocks);

}  // namespace strata::analysis
