// Planted: a device synchronize after every launch (rule gpu.launch_sync).
//
// 50,000 launches of a kernel of a few microseconds. The planted variant waits
// for each one (cudaDeviceSynchronize) before it launches the next, so the GPU
// idles for the launch latency and the host's wake-up every time; --fixed
// launches them all back to back on one stream and synchronizes once at the end.
// Stream order keeps each launch after the one before: the results are the same.
#include "planted_cuda.h"

namespace {

constexpr char kName[] = "planted_sync_every_launch";
constexpr long kLaunches = 50000;
constexpr int kInner = 384;  // dependent FMAs per element: a kernel of ~4 us on an H200

__global__ void step_kernel(float* x, size_t n, int inner) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < inner; ++k) v = __fmaf_rn(v, 0.9990234375f, 0.0009765625f);
  x[i] = v;
}

}  // namespace

int main(int argc, char** argv) {
  planted::Options opts = planted::parse_args(kName, argc, argv);
  const int sms = planted::setup_device(kName);
  const size_t n = size_t(sms) * 2048;  // one full wave of threads
  const long launches = planted::scaled(kLaunches, opts);
  float* x = nullptr;
  PLANTED_CHECK(cudaMalloc(&x, n * sizeof(float)));
  planted::fill(x, n, 1, kName);
  const unsigned blocks = unsigned((n + 255) / 256);
  step_kernel<<<blocks, 256>>>(x, n, kInner);  // warm-up: loads the module
  PLANTED_CHECK(cudaDeviceSynchronize());

  auto start = planted::Clock::now();
  for (long l = 0; l < launches; ++l) {
    step_kernel<<<blocks, 256>>>(x, n, kInner);
    // The planted cause: a host round trip per launch that stream order makes needless.
    if (!opts.fixed) PLANTED_CHECK(cudaDeviceSynchronize());
  }
  PLANTED_CHECK(cudaGetLastError());
  PLANTED_CHECK(cudaDeviceSynchronize());
  const double elapsed = planted::ms_since(start);

  planted::print_result(kName, opts, elapsed, planted::checksum(x, n, kName));
  PLANTED_CHECK(cudaFree(x));
  return 0;
}
