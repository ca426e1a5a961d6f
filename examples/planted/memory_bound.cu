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

// Each thread moves float4s (16 bytes per access) and has two loads in
// flight per iteration. With one float per access, 1056 blocks of 256
// threads streamed at 59 % of the H200's DRAM peak (latency-bound by ncu's
// 60 % rule: not the memory roofline this workload plants); with one float4,
// at 78-79 %, and with two in flight at 79.2-79.4 % (strata diagnose's kernel
// layer, 2026-12-04): the H200's practical DRAM ceiling, which strata's
// memory_roofline_pct (75) counts as the roofline.
// n counts floats and is a multiple of 4 (kElements, or 0 for the warm-up).
template <class Op>
__device__ void stream(float* out, const float* in, size_t n, Op op) {
  const size_t n4 = n / 4;
  auto* o = reinterpret_cast<float4*>(out);
  const auto* v = reinterpret_cast<const float4*>(in);
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (; i + stride < n4; i += 2 * stride) {
    const float4 a = v[i];
    const float4 b = v[i + stride];
    o[i] = make_float4(op(a.x), op(a.y), op(a.z), op(a.w));
    o[i + stride] = make_float4(op(b.x), op(b.y), op(b.z), op(b.w));
  }
  if (i < n4) {
    const float4 a = v[i];
    o[i] = make_float4(op(a.x), op(a.y), op(a.z), op(a.w));
  }
}

__global__ void mul_kernel(float* out, const float* in, size_t n, float s) {
  stream(out, in, n, [s](float x) { return __fmul_rn(x, s); });
}

__global__ void add_kernel(float* out, const float* in, size_t n, float s) {
  stream(out, in, n, [s](float x) { return __fadd_rn(x, s); });
}

__global__ void fused_kernel(float* out, const float* in, size_t n) {
  stream(out, in, n,
         [](float x) { return __fadd_rn(__fmul_rn(__fadd_rn(__fmul_rn(x, kA), kB), kC), kD); });
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
