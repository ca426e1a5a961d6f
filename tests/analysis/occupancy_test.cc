// The occupancy model against expectations derived by hand from the CUDA
// Occupancy Calculator's rules (cuda_occupancy.h, the spreadsheet) and against
// what Nsight Compute printed for real launches: the seed tutorial (sm_86, 20
// SMs), the H200 of shared/reference/anchor-figures.md, and published ncu
// outputs on H100, RTX 4090/4060 and other sm_86 parts. Each expectation says
// how it was derived.
#include "analysis/occupancy.h"

#include <gtest/gtest.h>

#include "analysis/gpu_specs.h"
#include "analysis/launch_rules.h"

namespace strata::analysis {
namespace {

constexpr int64_t K = 1024;

DeviceProps gpu(const char* name, int sms = 0) {
  auto d = find_gpu(name);
  EXPECT_TRUE(d.ok()) << name;
  if (sms > 0) d->sm_count = sms;
  return *d;
}

OccupancyResult occ(const DeviceProps& d, KernelLaunch k) {
  auto r = compute_occupancy(d, k);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : OccupancyResult{};
}

KernelLaunch launch(int block, int regs, int64_t static_smem = 0, int64_t dynamic_smem = 0) {
  KernelLaunch k;
  k.block_size = block;
  k.registers_per_thread = regs;
  k.static_smem = static_smem;
  k.dynamic_smem = dynamic_smem;
  return k;
}

bool has(const std::vector<KernelFinding>& fs, FindingKind kind) {
  for (const auto& f : fs) {
    if (f.kind == kind) return true;
  }
  return false;
}
const KernelFinding* find(const std::vector<KernelFinding>& fs, FindingKind kind) {
  for (const auto& f : fs) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

// --- sm_90 basics (the brief's published results) ---------------------------

TEST(Occupancy, Sm90Block256Regs32IsFull) {
  // W = 256/32 = 8 warps. Registers: 32 x 32 = 1024 per warp (already a
  // multiple of 256); 16384 per sub-partition / 1024 = 16 warps, x 4 = 64 warps
  // = 8 blocks. Warps: 64 / 8 = 8. SM: 32. Active 8 blocks = 64 warps = 100 %.
  auto r = occ(gpu("sm_90"), launch(256, 32));
  EXPECT_EQ(r.warps_per_block, 8);
  EXPECT_EQ(r.regs_per_warp, 1024);
  EXPECT_EQ(r.limit_registers, 8);
  EXPECT_EQ(r.limit_warps, 8);
  EXPECT_EQ(r.limit_blocks, 32);
  EXPECT_EQ(r.active_blocks, 8);
  EXPECT_EQ(r.active_warps, 64);
  EXPECT_DOUBLE_EQ(r.occupancy_pct, 100.0);
  // Shared memory: the 1 KB driver reserve per block; the smallest carveout
  // holding 8 blocks is 8 KB, which is not named as a limiter (the 228 KB one
  // would hold 228 blocks).
  EXPECT_EQ(r.smem_per_block, 1024);
  EXPECT_EQ(r.smem_config, 8 * K);
  EXPECT_EQ(r.limit_shared_mem, 8);
  EXPECT_EQ(r.limiters, unsigned{kLimitWarps | kLimitRegisters});
}

TEST(Occupancy, Sm90Regs128Block256IsRegisterLimited) {
  // 128 x 32 = 4096 registers per warp; 16384 / 4096 = 4 warps per
  // sub-partition, x 4 = 16 warps = 2 blocks of 8: 16 warps of 64 = 25 %.
  auto r = occ(gpu("h200"), launch(256, 128));
  EXPECT_EQ(r.regs_per_warp, 4096);
  EXPECT_EQ(r.limit_registers, 2);
  EXPECT_EQ(r.active_blocks, 2);
  EXPECT_EQ(r.active_warps, 16);
  EXPECT_DOUBLE_EQ(r.occupancy_pct, 25.0);
  EXPECT_EQ(r.limiters, unsigned{kLimitRegisters});
}

TEST(Occupancy, RegistersRoundUpPerWarpToTheAllocationUnit) {
  // 33 x 32 = 1056 -> 1280 (5 x 256); 16384 / 1280 = 12 warps per
  // sub-partition -> 48 warps -> 6 blocks of 8 (not 7, which 65536/1056/8
  // without the rounding would give).
  auto r = occ(gpu("sm_90"), launch(256, 33));
  EXPECT_EQ(r.regs_per_warp, 1280);
  EXPECT_EQ(r.limit_registers, 6);
  EXPECT_EQ(r.active_warps, 48);
  EXPECT_DOUBLE_EQ(r.occupancy_pct, 75.0);
}

TEST(Occupancy, WarpsAreAllocatedPerSubPartition) {
  // 80 regs -> 2560 per warp. Per sub-partition 16384 / 2560 = 6 warps, x 4 =
  // 24 warps; block 64 = 2 warps -> 12 blocks (ncu on the H200 agrees). For
  // block 32 the granularity shows: 24 blocks, where floor(65536 / 2560) = 25
  // warps without it would give 25.
  EXPECT_EQ(occ(gpu("sm_90"), launch(64, 80)).limit_registers, 12);
  EXPECT_EQ(occ(gpu("sm_90"), launch(32, 80)).limit_registers, 24);
}

// --- Nsight Compute outputs reproduced ---------------------------------------

TEST(Occupancy, AnchorH200GemmWithMeasuredConfig) {
  // shared/reference/anchor-figures.md: block 64, 80 registers, 6528 B
  // dynamic, configuration 135168 B, grid 16 on 132 SMs. ncu: barriers 32,
  // SM 32, registers 12, shared mem 17, warps 32; 24 warps (37.5 %); waves 0.01.
  auto k = launch(64, 80, 0, 6528);
  k.smem_config = 132 * K;
  k.grid_size = 16;
  auto r = occ(gpu("h200"), k);
  EXPECT_EQ(r.smem_per_block, 7552);  // 6528 + 1024, a multiple of 128
  EXPECT_EQ(r.limit_barriers_shown, 32);
  EXPECT_EQ(r.limit_blocks, 32);
  EXPECT_EQ(r.limit_registers, 12);
  EXPECT_EQ(r.limit_shared_mem, 17);  // 135168 / 7552 = 17.9
  EXPECT_EQ(r.limit_warps, 32);
  EXPECT_EQ(r.active_blocks, 12);
  EXPECT_EQ(r.active_warps, 24);
  EXPECT_DOUBLE_EQ(r.occupancy_pct, 37.5);
  ASSERT_TRUE(r.waves);
  EXPECT_NEAR(*r.waves, 16.0 / (12 * 132), 1e-12);  // 0.0101 -> "0.01"
  EXPECT_FALSE(r.smem_config_predicted);
}

TEST(Occupancy, AnchorH200GemmPredictedConfig) {
  // Without the measured configuration: 12 blocks x 7552 B = 90624 B fit the
  // 100 KB carveout (13 blocks); the occupancy is the same. (cuBLAS's kernel
  // ran with 132 KB: the driver or the library chose more.)
  auto r = occ(gpu("h200"), launch(64, 80, 0, 6528));
  EXPECT_EQ(r.smem_config, 100 * K);
  EXPECT_EQ(r.limit_shared_mem, 13);
  EXPECT_EQ(r.active_blocks, 12);
  EXPECT_TRUE(r.smem_config_predicted);
}

TEST(Occupancy, SeedSlowGemmOnSm86With20Sms) {
  // The seed tutorial's ampere_sgemm_32x32_sliced1x4_tn (4,4,1)x(128,1,1):
  // 86 registers, 32768 B static; ncu: config 102.40 KB, SM 16, registers 5,
  // shared mem 3, warps 12, 12 warps = 25 %, waves 0.27.
  // Registers 86 x 32 = 2752 -> 2816; 16384 / 2816 = 5 warps per
  // sub-partition -> 20 warps -> 5 blocks of 4. Shared memory 32768 + 1024 =
  // 33792 B; the other limits allow 5 blocks = 168960 B, more than the
  // largest carveout, so 100 KB: 102400 / 33792 = 3 blocks.
  auto k = launch(128, 86, 32768);
  k.grid_size = 16;
  auto r = occ(gpu("sm_86", 20), k);
  EXPECT_EQ(r.smem_config, 102400);
  EXPECT_EQ(r.limit_blocks, 16);
  EXPECT_EQ(r.limit_registers, 5);
  EXPECT_EQ(r.limit_shared_mem, 3);
  EXPECT_EQ(r.limit_warps, 12);
  EXPECT_EQ(r.active_warps, 12);
  EXPECT_DOUBLE_EQ(r.occupancy_pct, 25.0);
  EXPECT_NEAR(*r.waves, 16.0 / (3 * 20), 1e-12);  // 0.2667 -> "0.27"
  EXPECT_EQ(r.limiters, unsigned{kLimitSharedMem});
  EXPECT_FALSE(r.limit_barriers.has_value());  // no barrier limit before sm_90
}

TEST(Occupancy, SeedFastGemmOnSm86PicksThe64KConfiguration) {
  // The seed's ampere_sgemm_128x128_tn (1,1,8)x(256,1,1): 118 registers,
  // 16.90 KB static (16896 B); ncu: config 65.54 KB, registers 2, shared
  // mem 3, warps 6, 16 warps = 33.33 %, waves 0.20.
  // Registers 118 x 32 = 3776 -> 3840; 16384 / 3840 = 4 -> 16 warps -> 2
  // blocks. 16896 + 1024 = 17920 B; 2 blocks need 35840 B: 32 KB is too small,
  // 64 KB holds 3. (Merely fitting one block would pick 32 KB; ncu shows 64.)
  auto k = launch(256, 118, 16896);
  k.grid_size = 8;
  auto r = occ(gpu("sm_86", 20), k);
  EXPECT_EQ(r.smem_config, 64 * K);
  EXPECT_EQ(r.limit_registers, 2);
  EXPECT_EQ(r.limit_shared_mem, 3);
  EXPECT_EQ(r.limit_warps, 6);
  EXPECT_EQ(r.active_warps, 16);
  EXPECT_NEAR(r.occupancy_pct, 100.0 / 3, 1e-12);
  EXPECT_NEAR(*r.waves, 0.2, 1e-12);
}

TEST(Occupancy, H100PublishedLaunches) {
  // ncu on H100 SXM (132 SMs), configuration 32.77 KB as measured:
  // block 256, 67 regs: 67 x 32 = 2144 -> 2304; 16384 / 2304 = 7 -> 28
  // warps -> 3 blocks; 24 warps = 37.5 %; grid 3225 -> 3225 / 396 = 8.14 waves.
  auto k = launch(256, 67);
  k.smem_config = 32 * K;
  k.grid_size = 3225;
  auto r = occ(gpu("h100"), k);
  EXPECT_EQ(r.limit_registers, 3);
  EXPECT_EQ(r.limit_shared_mem, 32);
  EXPECT_EQ(r.limit_warps, 8);
  EXPECT_EQ(r.active_warps, 24);
  EXPECT_NEAR(*r.waves, 8.1439, 1e-4);

  // Block 1024, 31 regs, 12288 B static, grid 16384: 31 x 32 = 992 -> 1024
  // per warp -> 64 warps -> 2 blocks; warps 2; 12288 + 1024 = 13312 B, 2
  // blocks need 26624 B -> the 32 KB carveout (ncu: 32.77 KB, shared mem 2);
  // 100 %; 16384 / 264 = 62.06 waves.
  auto k2 = launch(1024, 31, 12288);
  k2.grid_size = 16384;
  auto r2 = occ(gpu("h100"), k2);
  EXPECT_EQ(r2.smem_config, 32 * K);
  EXPECT_EQ(r2.limit_registers, 2);
  EXPECT_EQ(r2.limit_shared_mem, 2);
  EXPECT_EQ(r2.limit_warps, 2);
  EXPECT_DOUBLE_EQ(r2.occupancy_pct, 100.0);
  EXPECT_NEAR(*r2.waves, 62.0606, 1e-4);

  // Block 128, 63 regs, 30736 B dynamic + 1 B static, grid 896: 63 x 32 =
  // 2016 -> 2048 -> 8 warps per sub-partition -> 32 warps -> 8 blocks; shared
  // 30736 + 1 + 1024 = 31761 -> 31872 B; 8 blocks need more than 228 KB, so
  // 228 KB: 233472 / 31872 = 7 (ncu: config 233.47 KB, shared mem 7); 28
  // warps; 896 / (7 x 132) = 0.97 waves.
  auto k3 = launch(128, 63, 1, 30736);
  k3.grid_size = 896;
  auto r3 = occ(gpu("h100"), k3);
  EXPECT_EQ(r3.smem_config, 228 * K);
  EXPECT_EQ(r3.limit_registers, 8);
  EXPECT_EQ(r3.limit_shared_mem, 7);
  EXPECT_EQ(r3.active_blocks, 7);
  EXPECT_NEAR(*r3.waves, 0.9697, 1e-4);
  EXPECT_EQ(r3.limiters, unsigned{kLimitSharedMem});
}

TEST(Occupancy, AdaPublishedLaunches) {
  // RTX 4090 (sm_89, 128 SMs), block 256, 16 regs, configuration 16.38 KB as
  // measured: registers 16 x 32 = 512 -> 32 warps per sub-partition -> 128
  // warps -> 16 blocks; shared 16384 / 1024 = 16; warps 48 / 8 = 6; SM 24.
  // 48 warps = 100 %; 65535 / 768 = 85.33 waves.
  auto k = launch(256, 16);
  k.smem_config = 16 * K;
  k.grid_size = 65535;
  auto r = occ(gpu("rtx4090"), k);
  EXPECT_EQ(r.limit_blocks, 24);
  EXPECT_EQ(r.limit_registers, 16);
  EXPECT_EQ(r.limit_shared_mem, 16);
  EXPECT_EQ(r.limit_warps, 6);
  EXPECT_DOUBLE_EQ(r.occupancy_pct, 100.0);
  EXPECT_NEAR(*r.waves, 85.3320, 1e-4);

  // RTX 4060 (sm_89), block 1024, 56 regs: 1792 per warp; 16384 / 1792 = 9
  // -> 36 warps -> 1 block; warps 1; 32 of 48 warps = 66.67 %, limited by
  // registers and warps (ncu names both); 1 block of 1 KB -> 8 KB carveout,
  // shared mem 8 (as ncu showed).
  auto r2 = occ(gpu("sm_89"), launch(1024, 56));
  EXPECT_EQ(r2.limit_registers, 1);
  EXPECT_EQ(r2.limit_warps, 1);
  EXPECT_EQ(r2.smem_config, 8 * K);
  EXPECT_EQ(r2.limit_shared_mem, 8);
  EXPECT_NEAR(r2.occupancy_pct, 200.0 / 3, 1e-12);
  EXPECT_EQ(r2.limiters, unsigned{kLimitRegisters | kLimitWarps});
}

TEST(Occupancy, Sm86PublishedCarveoutChoices) {
  // ncu on sm_86 parts, no carveout preference:
  // block 256, 16 regs, 1024 B dynamic: 2048 B per block; warps allow 6
  // blocks = 12 KB -> 16 KB config, shared mem 8 (ncu: 16.38 KB, 8).
  EXPECT_EQ(occ(gpu("sm_86"), launch(256, 16, 0, 1024)).smem_config, 16 * K);
  EXPECT_EQ(occ(gpu("sm_86"), launch(256, 16, 0, 1024)).limit_shared_mem, 8);
  // block 256, 16 regs, no shared memory: 6 KB -> 8 KB (ncu: 8.19 KB, 8).
  EXPECT_EQ(occ(gpu("sm_86"), launch(256, 16)).smem_config, 8 * K);
  // block 512, 22 regs, 2048 B dynamic: 22 x 32 = 704 -> 768; 16384 / 768 =
  // 21 -> 84 warps -> 5 blocks of 16; warps 3; 3 x 3072 B -> 16 KB config,
  // shared mem 5 (ncu: 16.38 KB, registers 5, shared mem 5, warps 3).
  auto r = occ(gpu("sm_86"), launch(512, 22, 0, 2048));
  EXPECT_EQ(r.limit_registers, 5);
  EXPECT_EQ(r.limit_warps, 3);
  EXPECT_EQ(r.smem_config, 16 * K);
  EXPECT_EQ(r.limit_shared_mem, 5);
  // block 512, 39 regs: 1248 -> 1280; 16384 / 1280 = 12 -> 48 warps -> 3;
  // 8 KB config, shared mem 8 (ncu: registers 3, shared mem 8, warps 3).
  auto r2 = occ(gpu("sm_86"), launch(512, 39));
  EXPECT_EQ(r2.limit_registers, 3);
  EXPECT_EQ(r2.limit_shared_mem, 8);
  // block 32, 16 regs: the SM's 16 blocks need 16 KB (ncu: 16.38 KB).
  EXPECT_EQ(occ(gpu("sm_86"), launch(32, 16)).smem_config, 16 * K);
}

// --- edge cases ---------------------------------------------------------------

TEST(Occupancy, ZeroRegistersImposeNoLimit) {
  auto r = occ(gpu("sm_90"), launch(256, 0));
  EXPECT_EQ(r.regs_per_warp, 0);
  EXPECT_EQ(r.limit_registers, kUnlimited);
  EXPECT_EQ(r.active_blocks, 8);  // the warp limit
  EXPECT_EQ(r.limiters, unsigned{kLimitWarps});
}

TEST(Occupancy, BlockOfOneThreadIsOneWarp) {
  // W = 1; warps would allow 64 blocks, the SM allows 32: 32 warps = 50 %,
  // limited by the SM's block limit.
  auto r = occ(gpu("sm_90"), launch(1, 32));
  EXPECT_EQ(r.warps_per_block, 1);
  EXPECT_EQ(r.limit_warps, 64);
  EXPECT_EQ(r.limit_registers, 64);
  EXPECT_EQ(r.active_blocks, 32);
  EXPECT_DOUBLE_EQ(r.occupancy_pct, 50.0);
  EXPECT_EQ(r.limiters, unsigned{kLimitBlocks});
}

TEST(Occupancy, BlockNotAMultipleOf32RoundsUpToWarps) {
  // 48 threads = 2 warps (the second half masked): warps 64 / 2 = 32 blocks.
  auto r = occ(gpu("sm_90"), launch(48, 32));
  EXPECT_EQ(r.warps_per_block, 2);
  EXPECT_EQ(r.limit_warps, 32);
  EXPECT_EQ(r.active_warps, 64);
  // 1000 threads = 32 warps, like 1024.
  EXPECT_EQ(occ(gpu("sm_90"), launch(1000, 32)).warps_per_block, 32);
}

TEST(Occupancy, Block1024) {
  // 32 warps; warps 64 / 32 = 2. With 64 regs: 2048 per warp, 8 per
  // sub-partition -> 32 warps -> 1 block: 50 %, register-limited.
  auto r = occ(gpu("sm_90"), launch(1024, 64));
  EXPECT_EQ(r.limit_warps, 2);
  EXPECT_EQ(r.limit_registers, 1);
  EXPECT_EQ(r.active_warps, 32);
  EXPECT_EQ(r.limiters, unsigned{kLimitRegisters});
  // 65 regs: 2080 -> 2304 per warp x 32 warps = 73728 > 65536 registers per
  // block: the launch fails (too many resources requested).
  auto r2 = occ(gpu("sm_90"), launch(1024, 65));
  EXPECT_EQ(r2.limit_registers, 0);
  EXPECT_EQ(r2.active_blocks, 0);
  EXPECT_DOUBLE_EQ(r2.occupancy_pct, 0.0);
  EXPECT_NE(r2.launch_error.find("73728 registers"), std::string::npos) << r2.launch_error;
}

TEST(Occupancy, Registers255) {
  // 255 x 32 = 8160 -> 8192 per warp; 16384 / 8192 = 2 per sub-partition ->
  // 8 warps: block 256 (8 warps, 65536 registers) fits once = 12.5 %;
  // block 128 twice; block 288 (9 warps = 73728) cannot launch.
  EXPECT_EQ(occ(gpu("sm_90"), launch(256, 255)).active_blocks, 1);
  EXPECT_DOUBLE_EQ(occ(gpu("sm_90"), launch(256, 255)).occupancy_pct, 12.5);
  EXPECT_EQ(occ(gpu("sm_90"), launch(128, 255)).active_blocks, 2);
  EXPECT_EQ(occ(gpu("sm_90"), launch(288, 255)).active_blocks, 0);
  // 256 registers per thread exceed the architectural 255.
  auto r = occ(gpu("sm_90"), launch(32, 256));
  EXPECT_EQ(r.active_blocks, 0);
  EXPECT_NE(r.launch_error.find("255"), std::string::npos);
}

TEST(Occupancy, HardwareRegisterCheckRoundsWarpsToSubPartitions) {
  // Block 800 = 25 warps, 80 regs = 2560 per warp: 64000 registers fit the
  // 65536 per block, but the hardware check rounds 25 warps up to 28:
  // 71680 > 65536, so cuda_occupancy.h says 0 blocks.
  auto r = occ(gpu("sm_90"), launch(800, 80));
  EXPECT_EQ(r.regs_per_block, 64000);
  EXPECT_EQ(r.limit_registers, 0);
  EXPECT_EQ(r.active_blocks, 0);
}

TEST(Occupancy, DynamicSharedMemoryAtTheOptInMaximum) {
  // sm_90: 227 KB = 232448 B per block with opt-in, + 1 KB reserve = 233472 B
  // = the 228 KB carveout: one block of 8 warps (12.5 %), shared-memory-limited.
  auto r = occ(gpu("sm_90"), launch(256, 32, 0, 227 * K));
  EXPECT_EQ(r.smem_per_block, 228 * K);
  EXPECT_EQ(r.smem_config, 228 * K);
  EXPECT_EQ(r.limit_shared_mem, 1);
  EXPECT_EQ(r.active_blocks, 1);
  EXPECT_TRUE(r.needs_smem_optin);
  EXPECT_EQ(r.limiters, unsigned{kLimitSharedMem});
  // One byte more rounds up to 233600 B: more than a block may have.
  auto r2 = occ(gpu("sm_90"), launch(256, 32, 0, 227 * K + 1));
  EXPECT_EQ(r2.limit_shared_mem, 0);
  EXPECT_EQ(r2.active_blocks, 0);
  EXPECT_NE(r2.launch_error.find("233600 bytes"), std::string::npos) << r2.launch_error;
}

TEST(Occupancy, BlockLargerThanTheDeviceMaximum) {
  auto r = occ(gpu("sm_90"), launch(1025, 32));
  EXPECT_EQ(r.limit_warps, 0);
  EXPECT_EQ(r.active_blocks, 0);
  EXPECT_NE(r.launch_error.find("1024 threads per block"), std::string::npos);
}

TEST(Occupancy, BarriersOnSm90) {
  // floor(64 / barriers): 1 -> 64 (shown as 32, the SM limit), 7 -> 9.
  auto r = occ(gpu("sm_90"), launch(32, 32));
  EXPECT_EQ(r.limit_barriers, 64);
  EXPECT_EQ(r.limit_barriers_shown, 32);
  EXPECT_EQ(r.limiters, unsigned{kLimitBlocks});  // not barriers
  auto k = launch(32, 32);
  k.barriers = 7;
  auto r2 = occ(gpu("sm_90"), k);
  EXPECT_EQ(r2.limit_barriers, 9);
  EXPECT_EQ(r2.active_blocks, 9);
  EXPECT_EQ(r2.limiters, unsigned{kLimitBarriers});
  k.barriers = 0;
  EXPECT_EQ(occ(gpu("sm_90"), k).limit_barriers, kUnlimited);
}

TEST(Occupancy, OlderArchitectures) {
  // T4 (sm_75): 32 warps, 16 blocks, no driver reserve. Block 256, 32 regs:
  // registers 8 blocks, warps 32 / 8 = 4: 4 blocks = 32 warps = 100 %. No
  // shared memory at all: no shared-memory limit; the smallest Turing
  // configuration is 32 KB.
  auto t4 = occ(gpu("t4"), launch(256, 32));
  EXPECT_EQ(t4.limit_warps, 4);
  EXPECT_EQ(t4.limit_registers, 8);
  EXPECT_EQ(t4.limit_blocks, 16);
  EXPECT_EQ(t4.limit_shared_mem, kUnlimited);
  EXPECT_EQ(t4.smem_config, 32 * K);
  EXPECT_DOUBLE_EQ(t4.occupancy_pct, 100.0);
  // V100 (sm_70): block 128, 64 regs, 48 KB static (a multiple of the 256 B
  // granularity, no reserve): registers 2048 per warp -> 32 warps -> 8 blocks;
  // 8 x 48 KB exceeds 96 KB, so 96 KB: 2 blocks = 8 warps = 12.5 %.
  auto v = occ(gpu("v100"), launch(128, 64, 48 * K));
  EXPECT_EQ(v.smem_per_block, 48 * K);
  EXPECT_EQ(v.smem_config, 96 * K);
  EXPECT_EQ(v.limit_shared_mem, 2);
  EXPECT_DOUBLE_EQ(v.occupancy_pct, 12.5);
  // Static shared memory rounds up to 256 B there: 100 B -> 256.
  EXPECT_EQ(occ(gpu("sm_70"), launch(128, 32, 100)).smem_per_block, 256);
  // A100 (sm_80): 128 B granularity and the 1 KB reserve: 100 B -> 1152.
  EXPECT_EQ(occ(gpu("a100"), launch(128, 32, 100)).smem_per_block, 1152);
}

TEST(Occupancy, GivenConfigurationTooSmallForOneBlockIsRaised) {
  // 40 KB static + 1 KB on sm_90 in an 8 KB configuration: the driver uses
  // the smallest that holds one block, 64 KB (1 block of 41 KB).
  auto k = launch(256, 32, 40 * K);
  k.smem_config = 8 * K;
  auto r = occ(gpu("sm_90"), k);
  EXPECT_TRUE(r.smem_config_raised);
  EXPECT_EQ(r.smem_config, 64 * K);
  EXPECT_EQ(r.limit_shared_mem, 1);
}

TEST(Occupancy, BadInputsAreErrors) {
  auto d = gpu("sm_90");
  EXPECT_FALSE(compute_occupancy(d, launch(0, 32)).ok());
  EXPECT_FALSE(compute_occupancy(d, launch(32, -1)).ok());
  EXPECT_FALSE(compute_occupancy(d, launch(32, 32, -1)).ok());
  auto k = launch(32, 32);
  k.smem_config = 50 * K;  // not a carveout sm_90 has
  auto r = compute_occupancy(d, k);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KB"),
            std::string::npos)
      << r.error().message;
  DeviceProps broken = d;
  broken.max_warps_per_sm = 0;
  EXPECT_FALSE(compute_occupancy(broken, launch(32, 32)).ok());
}

// --- gpu_specs ----------------------------------------------------------------

TEST(GpuSpecs, LooksUpByArchitectureAndNameIgnoringCase) {
  EXPECT_EQ(gpu("H200").sm_count, 132);
  EXPECT_EQ(gpu("SM_90").cc_major, 9);
  EXPECT_EQ(gpu("sm90").cc_major, 9);
  EXPECT_EQ(gpu("H100 PCIe").sm_count, 114);
  EXPECT_EQ(gpu("a100").sm_count, 108);
  EXPECT_EQ(gpu("sm_86").max_warps_per_sm, 48);
  EXPECT_EQ(gpu("sm_89").max_blocks_per_sm, 24);
  EXPECT_EQ(gpu("sm_75").max_warps_per_sm, 32);
  EXPECT_EQ(gpu("b200").sm_count, 148);
  auto bad = find_gpu("h300");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown GPU 'h300'"), std::string::npos);
  EXPECT_NE(bad.error().message.find("sm_90"), std::string::npos);
  EXPECT_NE(bad.error().message.find("h200"), std::string::npos);
  EXPECT_FALSE(find_gpu("").ok());
}

TEST(GpuSpecs, EveryEntryIsValid) {
  for (const auto& spec : known_gpus()) {
    EXPECT_TRUE(validate(spec.props).ok()) << spec.key;
    EXPECT_EQ(spec.props.reserved_smem_per_block, spec.props.cc_major >= 8 ? 1024 : 0) << spec.key;
    // The opt-in maximum per block plus the reserve fits the largest carveout.
    EXPECT_LE(spec.props.smem_per_block_optin + spec.props.reserved_smem_per_block,
              spec.props.smem_per_sm)
        << spec.key;
  }
}

// --- rules --------------------------------------------------------------------

TEST(LaunchRules, GridSmallerThanSmsGivesTheIdleShare) {
  // ncu on a 38-SM sm_86 part: one block of 32 threads -> Est. Speedup
  // (38 - 1) / 38 = 97.37 %.
  auto d = gpu("sm_86", 38);
  auto k = launch(32, 16);
  k.grid_size = 1;
  auto fs = launch_findings(d, k, occ(d, k));
  auto* f = find(fs, FindingKind::kGridSmallerThanSms);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(*f->est_speedup_pct, 100.0 * 37 / 38, 1e-9);
  EXPECT_EQ(f->section, KernelSection::kLaunchStatistics);
  EXPECT_FALSE(has(fs, FindingKind::kGridBelowOneWave));
}

TEST(LaunchRules, GridBelowOneWave) {
  // Seed slow gemm with 40 blocks on 20 SMs x 3 blocks: 40 / 60 = 0.67 waves,
  // a third of the slots empty.
  auto d = gpu("sm_86", 20);
  auto k = launch(128, 86, 32768);
  k.grid_size = 40;
  auto fs = launch_findings(d, k, occ(d, k));
  auto* f = find(fs, FindingKind::kGridBelowOneWave);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->blocks_per_wave, 60);
  EXPECT_NEAR(*f->est_speedup_pct, 100.0 / 3, 1e-9);
}

TEST(LaunchRules, TailEffect) {
  // ncu on H100: grid 3225 at 8 blocks x 132 SMs = 1056 per wave: 3 full
  // waves and a partial one of 57 blocks, up to 1 / 4 = 25 % of the run time.
  auto d = gpu("h100");
  auto k = launch(256, 16);
  k.grid_size = 3225;
  auto fs = launch_findings(d, k, occ(d, k));
  auto* f = find(fs, FindingKind::kTailEffect);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->blocks_per_wave, 1056);
  EXPECT_EQ(f->full_waves, 3);
  EXPECT_EQ(f->partial_wave_blocks, 57);
  EXPECT_DOUBLE_EQ(*f->est_speedup_pct, 25.0);
  // 5 full waves and a bit: 1 / 6 < 20 %, no finding; whole waves: none.
  k.grid_size = 5 * 1056 + 1;
  EXPECT_FALSE(has(launch_findings(d, k, occ(d, k)), FindingKind::kTailEffect));
  k.grid_size = 2 * 1056;
  EXPECT_FALSE(has(launch_findings(d, k, occ(d, k)), FindingKind::kTailEffect));
}

TEST(LaunchRules, OccupancyLimitedNamesTheResource) {
  // sm_90, 128 regs x 256: 25 % < 80 %, register-limited; 4 warps per
  // scheduler of 16; bound 75 %.
  auto d = gpu("sm_90");
  auto k = launch(256, 128);
  auto fs = launch_findings(d, k, occ(d, k));
  auto* f = find(fs, FindingKind::kTheoreticalOccupancyLimited);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->limiters, unsigned{kLimitRegisters});
  EXPECT_DOUBLE_EQ(f->theoretical_warps_per_scheduler, 4.0);
  EXPECT_EQ(f->max_warps_per_scheduler, 16);
  EXPECT_DOUBLE_EQ(*f->est_speedup_pct, 75.0);
  EXPECT_TRUE(f->est_local);
  // 100 %: nothing to say; no grid: no Launch Statistics rules.
  auto full = launch(256, 32);
  EXPECT_TRUE(launch_findings(d, full, occ(d, full)).empty());
}

TEST(LaunchRules, BlockSizeNotAMultipleOfTheWarp) {
  // 48 threads in 2 warps: 16 of 64 lanes masked, 25 %.
  auto d = gpu("sm_90");
  auto k = launch(48, 32);
  auto findings = launch_findings(d, k, occ(d, k));
  auto* f = find(findings, FindingKind::kBlockSizeNotWarpMultiple);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->est_speedup_pct, 25.0);
}

TEST(LaunchRules, AchievedOccupancyGapAndCannotLaunch) {
  auto d = gpu("h100");
  auto k = launch(256, 16);
  k.achieved_occupancy_pct = 50.14;  // ncu: theoretical 100, achieved 50.14
  auto findings = launch_findings(d, k, occ(d, k));
  auto* f = find(findings, FindingKind::kAchievedOccupancyGap);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(*f->est_speedup_pct, 49.86, 1e-9);
  k.achieved_occupancy_pct = 91;  // within 10 points
  EXPECT_FALSE(has(launch_findings(d, k, occ(d, k)), FindingKind::kAchievedOccupancyGap));

  auto bad = launch(1024, 65);
  bad.grid_size = 10;
  auto fs = launch_findings(d, bad, occ(d, bad));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].kind, FindingKind::kCannotLaunch);
  EXPECT_EQ(fs[0].severity, FindingSeverity::kWrn);
}

TEST(LaunchRules, SharedMemoryOptIn) {
  auto d = gpu("sm_90");
  auto k = launch(256, 32, 0, 64 * K);
  auto findings = launch_findings(d, k, occ(d, k));
  auto* f = find(findings, FindingKind::kSharedMemOptIn);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->smem_requested, 64 * K);
  EXPECT_EQ(f->smem_default_max, 48 * K);
}

}  // namespace
}  // namespace strata::analysis
