// Planted: a grid smaller than the GPU (rule kernel.small_grid).
//
// 100 launches of a compute kernel over 2M elements (2048 dependent FMAs each),
// written with a grid-stride loop and launched with 8 blocks: 8 of the GPU's SMs
// (132 on an H200) do all the work, each with too few warps to hide the FMA
// latency. --fixed launches the same kernel with 8 blocks per SM; every element
// gets the same operations in the same order, so the results are identical.
#include "planted_cuda.h"

namespace {

constexpr char kName[] = "planted_tiny_grid";
constexpr long kLaunches = 100;
constexpr size_t kElements = size_t{2} << 20;
constexpr int kInner = 2048;
constexpr int kPlantedBlocks = 8;

__global__ void work_kernel(float* x, size_t n, int inner) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    float v = x[i];
    for (int k = 0; k < inner; ++k) v = __fmaf_rn(v, 0.9990234375f, 0.0009765625f);
    x[i] = v;
  }
}

}  // namespace

int main(int argc, char** argv) {
  planted::Options opts = planted::parse_args(kName, argc, argv);
  const int sms = planted::setup_device(kName);
  const long launches = planted::scaled(kLaunches, opts);
  float* x = nullptr;
  PLANTED_CHECK(cudaMalloc(&x, kElements * sizeof(float)));
  planted::fill(x, kElements, 3, kName);
  work_kernel<<<1, 256>>>(x, 0, kInner);  // warm-up
  PLANTED_CHECK(cudaDeviceSynchronize());

  // The planted cause: a fixed, small grid, whatever the GPU.
  const unsigned blocks = opts.fixed ? unsigned(sms) * 8 : kPlantedBlocks;
  auto start = planted::Clock::now();
  for (long l = 0; l < launches; ++l) work_kernel<<<blocks, 256>>>(x, kElements, kInner);
  PLANTED_CHECK(cudaGetLastError());
  PLANTED_CHECK(cudaDeviceSynchronize());
  const double elapsed = planted::ms_since(start);

  planted::print_result(kName, opts, elapsed, planted::checksum(x, kElements, kName));
  PLANTED_CHECK(cudaFree(x));
  return 0;
}
