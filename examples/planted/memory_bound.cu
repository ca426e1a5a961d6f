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
static_assert(kElements % 4 == 0, "the kernels move float4s");
constexpr float kA = 0.5f, kB = 0.25f, kC = 1.5f, kD = 0.125f;

// Each thread moves float4s (16 bytes per load and store): with one float
// per access, 1056 blocks of 256 threads kept too few bytes in flight and
// streamed at 59 % of the H200's DRAM peak (measured by strata diagnose's
// kernel layer: latency-bound, not the memory roofline this workload plants).
// n counts floats and is a multiple of 4 (kElements, or 0 for the warm-up).
__global__ void mul_kernel(float* out, const float* in, size_t n, float s) {
  const size_t n4 = n / 4;
  auto* o = reinterpret_cast<float4*>(out);
  const auto* v = reinterpret_cast<const float4*>(in);
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n4;
       i += size_t{gridDim.x} * blockDim.x) {
    const float4 a = v[i];
    o[i] = make_float4(__fmul_rn(a.x, s), __fmul_rn(a.y, s), __fmul_rn(a.z, s), __fmul_rn(a.w, s));
  }
}

__global__ void add_kernel(float* out, const float* in, size_t n, float s) {
  const size_t n4 = n / 4;
  auto* o = reinterpret_cast<float4*>(out);
  const auto* v = reinterpret_cast<const float4*>(in);
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n4;
       i += size_t{gridDim.x} * blockDim.x) {
    const float4 a = v[i];
    o[i] = make_float4(__fadd_rn(a.x, s), __fadd_rn(a.y, s), __fadd_rn(a.z, s), __fadd_rn(a.w, s));
  }
}

__device__ float fused(float x) {
  return __fadd_rn(__fmul_rn(__fadd_rn(__fmul_rn(x, kA), kB), kC), kD);
}

__global__ void fused_kernel(float* out, const float* in, size_t n) {
  const size_t n4 = n / 4;
  auto* o = reinterpret_cast<float4*>(out);
  const auto* v = reinterpret_cast<const float4*>(in);
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n4;
       i += size_t{gridDim.x} * blockDim.x) {
    const float4 a = v[i];
    o[i] = make_float4(fused(a.x), fused(a.y), fused(a.z), fused(a.w));
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
