// Planted: memory-bound kernels at DRAM peak (rule kernel.memory_bound).
//
// 800 rounds of y = ((x * a) + b) * c + d over 64M floats (256 MiB per array),
// x and y swapped after each round. The planted variant computes each operation
// in its own elementwise kernel: four full passes over DRAM per round, each
// streaming at close to the DRAM bandwidth. --fixed fuses them into one kernel:
// one read and one write per element. __fmul_rn/__fadd_rn keep the compiler from
// contracting the fused kernel's multiply-adds, so both round the same way.
#include <utility>

#include "planted_cuda.h"

namespace {

constexpr char kName[] = "planted_memory_bound";
constexpr long kRounds = 800;
constexpr size_t kElements = size_t{64} << 20;
constexpr float kA = 0.5f, kB = 0.25f, kC = 1.5f, kD = 0.125f;

__global__ void mul_kernel(float* out, const float* in, size_t n, float s) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = __fmul_rn(in[i], s);
  }
}

__global__ void add_kernel(float* out, const float* in, size_t n, float s) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = __fadd_rn(in[i], s);
  }
}

__global__ void fused_kernel(float* out, const float* in, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = __fadd_rn(__fmul_rn(__fadd_rn(__fmul_rn(in[i], kA), kB), kC), kD);
  }
}

}  // namespace

int main(int argc, char** argv) {
  planted::Options opts = planted::parse_args(kName, argc, argv);
  const int sms = planted::setup_device(kName);
  const long rounds = planted::scaled(kRounds, opts);
  float *x = nullptr, *y = nullptr;
  PLANTED_CHECK(cudaMalloc(&x, kElements * sizeof(float)));
  PLANTED_CHECK(cudaMalloc(&y, kElements * sizeof(float)));
  planted::fill(x, kElements, 4, kName);
  const unsigned blocks = unsigned(sms) * 8;
  mul_kernel<<<blocks, 256>>>(y, x, 0, kA);  // warm-up
  fused_kernel<<<blocks, 256>>>(y, x, 0);
  PLANTED_CHECK(cudaDeviceSynchronize());

  auto start = planted::Clock::now();
  for (long r = 0; r < rounds; ++r) {
    if (opts.fixed) {
      fused_kernel<<<blocks, 256>>>(y, x, kElements);
    } else {
      // The planted cause: four passes over DRAM where one would do.
      mul_kernel<<<blocks, 256>>>(y, x, kElements, kA);
      add_kernel<<<blocks, 256>>>(y, y, kElements, kB);
      mul_kernel<<<blocks, 256>>>(y, y, kElements, kC);
      add_kernel<<<blocks, 256>>>(y, y, kElements, kD);
    }
    std::swap(x, y);
  }
  PLANTED_CHECK(cudaGetLastError());
  PLANTED_CHECK(cudaDeviceSynchronize());
  const double elapsed = planted::ms_since(start);

  planted::print_result(kName, opts, elapsed, planted::checksum(x, kElements, kName));
  PLANTED_CHECK(cudaFree(x));
  PLANTED_CHECK(cudaFree(y));
  return 0;
}
