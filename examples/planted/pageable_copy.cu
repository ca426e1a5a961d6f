// Planted: host-to-device copies from pageable memory (rule gpu.pageable_copy).
//
// 32 uploads of the same 64 MiB host buffer, each followed by a kernel that adds
// it into an accumulator. The planted buffer is ordinary heap memory: the driver
// stages every copy through its own pinned buffer, at a fraction of the link's
// bandwidth, and the call blocks the host meanwhile. --fixed allocates the buffer
// pinned (cudaMallocHost), before the timed loop, as a program would once; the
// bytes copied and the kernels are the same.
#include <cstring>
#include <vector>

#include "planted_cuda.h"

namespace {

constexpr char kName[] = "planted_pageable_copy";
constexpr long kCopies = 32;
constexpr size_t kFloats = size_t{16} << 20;  // 64 MiB

__global__ void accumulate_kernel(float* acc, const float* in, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    acc[i] = __fadd_rn(acc[i], in[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  planted::Options opts = planted::parse_args(kName, argc, argv);
  const int sms = planted::setup_device(kName);
  const long copies = planted::scaled(kCopies, opts);
  const size_t bytes = kFloats * sizeof(float);

  std::vector<float> pageable;
  float* host = nullptr;
  if (opts.fixed) {
    PLANTED_CHECK(cudaMallocHost(&host, bytes));
  } else {
    pageable.resize(kFloats);  // the planted cause: memory the GPU cannot reach directly
    host = pageable.data();
  }
  // Written in full before the loop in both variants: no first-touch page faults in it.
  for (size_t i = 0; i < kFloats; ++i) host[i] = float(i % 1000) * 0.001f;

  float *in = nullptr, *acc = nullptr;
  PLANTED_CHECK(cudaMalloc(&in, bytes));
  PLANTED_CHECK(cudaMalloc(&acc, bytes));
  PLANTED_CHECK(cudaMemset(acc, 0, bytes));
  accumulate_kernel<<<sms * 4, 256>>>(acc, in, 0);  // warm-up
  PLANTED_CHECK(cudaDeviceSynchronize());

  auto start = planted::Clock::now();
  for (long c = 0; c < copies; ++c) {
    PLANTED_CHECK(cudaMemcpyAsync(in, host, bytes, cudaMemcpyHostToDevice, 0));
    accumulate_kernel<<<sms * 4, 256>>>(acc, in, kFloats);
  }
  PLANTED_CHECK(cudaGetLastError());
  PLANTED_CHECK(cudaDeviceSynchronize());
  const double elapsed = planted::ms_since(start);

  planted::print_result(kName, opts, elapsed, planted::checksum(acc, kFloats, kName));
  if (opts.fixed) PLANTED_CHECK(cudaFreeHost(host));
  PLANTED_CHECK(cudaFree(in));
  PLANTED_CHECK(cudaFree(acc));
  return 0;
}
