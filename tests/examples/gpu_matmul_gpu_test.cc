// gpu_matmul on a GPU (ctest label `gpu`): both cuBLAS modes give the CPU
// reference's checksum. SKIPPED where no CUDA device exists.
#include <gtest/gtest.h>

#include <string>

#include "cuda_device.h"
#include "matmul_output.h"
#include "run_command.h"

namespace {

using examples_test::checksums_agree;
using examples_test::parse_matmul_line;
using examples_test::run_command;

double checksum_of(const std::string& mode, const std::string& device, const std::string& repeats,
                   const std::string& tile) {
  auto result = run_command({GPU_MATMUL_BIN, "--mode", mode, "--device", device, "--repeats",
                             repeats, "--tile-size", tile});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  auto line = parse_matmul_line(result.out);
  EXPECT_TRUE(line) << result.out;
  if (!line) return 0;
  EXPECT_EQ(line->device, device);
  return line->checksum;
}

TEST(GpuMatmulCuda, ModesMatchEachOtherAndTheCpuReference) {
  STRATA_SKIP_WITHOUT_CUDA_DEVICE();
  // The seed's size, and an odd one that no kernel tile divides.
  for (auto [repeats, tile] : {std::pair{"128", "128"}, std::pair{"7", "33"}}) {
    SCOPED_TRACE(std::string("repeats=") + repeats + " tile_size=" + tile);
    double reference = checksum_of("batched", "cpu", repeats, tile);
    double slow = checksum_of("slow_loop_sync", "cuda", repeats, tile);
    double batched = checksum_of("batched", "cuda", repeats, tile);
    EXPECT_TRUE(checksums_agree(slow, batched));
    EXPECT_TRUE(checksums_agree(slow, reference));
    EXPECT_TRUE(checksums_agree(batched, reference));
  }
}

}  // namespace
