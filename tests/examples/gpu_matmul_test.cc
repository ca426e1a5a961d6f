// gpu_matmul without a GPU: flags, output format, the CPU reference and how CUDA
// errors are reported. The GPU runs are in gpu_matmul_gpu_test.cc.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cuda_device.h"
#include "matmul_output.h"
#include "matmul_ref.h"
#include "run_command.h"

namespace {

using examples_test::checksums_agree;
using examples_test::parse_matmul_line;
using examples_test::run_command;

// The textbook i, j, k loop over column-major storage, to check the reference's
// faster loop order against.
double naive_checksum(int repeats, int n) {
  size_t tile = static_cast<size_t>(n) * n;
  std::vector<float> a = matmul_ref::random_matrices(repeats * tile, matmul_ref::kInputSeed);
  std::vector<float> b = matmul_ref::random_matrices(repeats * tile, matmul_ref::kInputSeed + 1);
  double sum = 0;
  for (size_t p = 0; p < static_cast<size_t>(repeats); ++p) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        double c = 0;
        for (int k = 0; k < n; ++k) c += double(a[p * tile + i + k * n]) * b[p * tile + k + j * n];
        sum += static_cast<float>(c);
      }
    }
  }
  return sum;
}

TEST(MatmulRef, UsesColumnMajorLayoutLikeCublas) {
  // A = [1 3; 2 4] and B = [5 7; 6 8], stored column by column.
  const float a[] = {1, 2, 3, 4};
  const float b[] = {5, 6, 7, 8};
  float c[4] = {};
  matmul_ref::sgemm(2, a, b, c);
  // A * B = [23 31; 34 46].
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{23, 34, 31, 46}));
}

TEST(MatmulRef, BatchedEqualsOneCallPerTile) {
  const int n = 5;
  const int batch = 3;
  std::vector<float> a = matmul_ref::random_matrices(batch * n * n, 1);
  std::vector<float> b = matmul_ref::random_matrices(batch * n * n, 2);
  std::vector<float> batched(a.size());
  std::vector<float> looped(a.size());
  matmul_ref::sgemm_strided_batched(n, batch, a.data(), b.data(), batched.data());
  for (int p = 0; p < batch; ++p) {
    matmul_ref::sgemm(n, &a[p * n * n], &b[p * n * n], &looped[p * n * n]);
  }
  EXPECT_EQ(batched, looped);
}

TEST(MatmulRef, InputsAreDeterministicAndInUnitInterval) {
  std::vector<float> v = matmul_ref::random_matrices(10000, 42);
  EXPECT_EQ(v, matmul_ref::random_matrices(10000, 42));
  EXPECT_NE(v, matmul_ref::random_matrices(10000, 43));
  for (float x : v) ASSERT_TRUE(x >= 0.0f && x < 1.0f) << x;
}

TEST(GpuMatmulCpu, ModesGiveMatchingChecksumsInTheSeedsFormat) {
  struct Size {
    const char* repeats;
    const char* tile;
  };
  for (Size size : {Size{"128", "128"}, Size{"7", "33"}}) {
    std::vector<double> checksums;
    for (const char* mode : {"slow_loop_sync", "batched"}) {
      auto result = run_command({GPU_MATMUL_BIN, "--mode", mode, "--device", "cpu", "--repeats",
                                 size.repeats, "--tile-size", size.tile});
      ASSERT_EQ(result.exit_code, 0) << result.err;
      auto line = parse_matmul_line(result.out);
      ASSERT_TRUE(line) << result.out;
      EXPECT_EQ(line->mode, mode);
      EXPECT_EQ(line->device, "cpu");
      EXPECT_EQ(line->repeats, std::stoi(size.repeats));
      EXPECT_EQ(line->tile_size, std::stoi(size.tile));
      checksums.push_back(line->checksum);
    }
    EXPECT_TRUE(checksums_agree(checksums[0], checksums[1]));
  }
}

TEST(GpuMatmulCpu, ChecksumIsTheSumOfTheProducts) {
  auto result = run_command({GPU_MATMUL_BIN, "--mode", "batched", "--device", "cpu", "--repeats",
                             "3", "--tile-size", "17"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto line = parse_matmul_line(result.out);
  ASSERT_TRUE(line) << result.out;
  EXPECT_TRUE(checksums_agree(line->checksum, naive_checksum(3, 17), 1e-6));
}

TEST(GpuMatmulCpu, DefaultsAreTheSeedsSizes) {
  auto result = run_command({GPU_MATMUL_BIN, "--mode=batched_bmm", "--device=cpu"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto line = parse_matmul_line(result.out);
  ASSERT_TRUE(line) << result.out;
  EXPECT_EQ(line->mode, "batched_bmm");
  EXPECT_EQ(line->repeats, 128);
  EXPECT_EQ(line->tile_size, 128);
}

TEST(GpuMatmulCpu, InvalidFlagsExitWithUsage) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--device", "cpu"},
      {"--mode", "fast"},
      {"--mode", "batched", "--device", "tpu"},
      {"--mode", "batched", "--repeats", "0"},
      {"--mode", "batched", "--repeats", "ten"},
      {"--mode", "batched", "--tile-size", "-3"},
      {"--mode", "batched", "--tile-size"},
      {"--mode", "batched", "--repeats", "1000000", "--tile-size", "16384"},
      {"--mode", "batched", "--bogus", "1"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv = {GPU_MATMUL_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = run_command(argv);
    std::string shown = ::testing::PrintToString(args);
    EXPECT_EQ(result.exit_code, 2) << shown;
    EXPECT_EQ(result.out, "") << shown;
    EXPECT_NE(result.err.find("usage: gpu_matmul"), std::string::npos) << shown << result.err;
  }
}

// Only meaningful where CUDA cannot run: there the program must fail with the
// name of the call and of the error, not crash or print a result.
TEST(GpuMatmulCpu, NamesTheCudaErrorWithoutADevice) {
  std::string why;
  if (examples_test::cuda_device_present(&why)) GTEST_SKIP() << "a CUDA device is present";
  auto result = run_command({GPU_MATMUL_BIN, "--mode", "batched", "--repeats", "1", "--tile-size",
                             "8", "--device", "cuda"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_TRUE(std::regex_search(
      result.err,
      std::regex(R"(^gpu_matmul: cudaGetDeviceCount: (cudaError[A-Za-z]+ \(|no CUDA device))")))
      << result.err;
}

}  // namespace
