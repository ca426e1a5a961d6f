// Planted: a storm of tiny kernels (rule gpu.launch_bound).
//
// 150,000 launches of one 256-thread block each, every one updating its own
// 256 floats: each kernel is shorter than the host's cudaLaunchKernel, so the
// GPU waits on the launches. Nothing synchronizes in the loop. --fixed does the
// same per-element update in one launch over the whole array.
#include "planted_cuda.h"

namespace {

constexpr char kName[] = "planted_kernel_storm";
constexpr long kChunks = 150000;  // ~5 us per launch on the H200 host: 0.75 s
constexpr int kChunk = 256;

__global__ void update_kernel(float* x, size_t n) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) x[i] = __fmaf_rn(x[i], 1.5f, 0.25f);
}

}  // namespace

int main(int argc, char** argv) {
  planted::Options opts = planted::parse_args(kName, argc, argv);
  planted::setup_device(kName);
  const long chunks = planted::scaled(kChunks, opts);
  const size_t n = size_t(chunks) * kChunk;
  float* x = nullptr;
  PLANTED_CHECK(cudaMalloc(&x, n * sizeof(float)));
  planted::fill(x, n, 2, kName);
  update_kernel<<<1, kChunk>>>(x, 0);  // warm-up (n = 0: touches nothing)
  PLANTED_CHECK(cudaDeviceSynchronize());

  auto start = planted::Clock::now();
  if (opts.fixed) {
    update_kernel<<<unsigned(chunks), kChunk>>>(x, n);
  } else {
    // The planted cause: one launch per 256 elements.
    for (long c = 0; c < chunks; ++c) update_kernel<<<1, kChunk>>>(x + c * kChunk, kChunk);
  }
  PLANTED_CHECK(cudaGetLastError());
  PLANTED_CHECK(cudaDeviceSynchronize());
  const double elapsed = planted::ms_since(start);

  planted::print_result(kName, opts, elapsed, planted::checksum(x, n, kName));
  PLANTED_CHECK(cudaFree(x));
  return 0;
}
