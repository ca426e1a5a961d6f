// Healthy: a large batched GEMM, nothing planted (strata diagnose: no finding).
//
// 150 calls of cublasGemmStridedBatchedEx: 16 products of 4096 x 4096 BF16
// matrices, FP32 accumulation and output, inputs generated on the device. One
// launch per call, no synchronization in the loop, no host copies: the GPU's
// tensor cores are busy from the first call to the last. --fixed is accepted and
// runs the same thing (there is nothing to fix).
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include "planted_cuda.h"

namespace {

constexpr char kName[] = "planted_healthy_gemm";
constexpr long kCalls = 150;
constexpr int kN = 4096;
constexpr int kBatch = 16;

__global__ void to_bf16_kernel(__nv_bfloat16* out, const float* in, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = __float2bfloat16(in[i] - 1.0f);
  }
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "%s: %s: %s\n", kName, call, cublasGetStatusName(status));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  planted::Options opts = planted::parse_args(kName, argc, argv);
  planted::setup_device(kName);
  const long calls = planted::scaled(kCalls, opts);
  const size_t stride = size_t(kN) * kN;
  const size_t elements = stride * kBatch;

  float *staging = nullptr, *c = nullptr;
  __nv_bfloat16 *a = nullptr, *b = nullptr;
  PLANTED_CHECK(cudaMalloc(&staging, elements * sizeof(float)));
  PLANTED_CHECK(cudaMalloc(&c, elements * sizeof(float)));
  PLANTED_CHECK(cudaMalloc(&a, elements * sizeof(__nv_bfloat16)));
  PLANTED_CHECK(cudaMalloc(&b, elements * sizeof(__nv_bfloat16)));
  planted::fill(staging, elements, 5, kName);
  to_bf16_kernel<<<1024, 256>>>(a, staging, elements);
  planted::fill(staging, elements, 6, kName);
  to_bf16_kernel<<<1024, 256>>>(b, staging, elements);
  PLANTED_CHECK(cudaGetLastError());
  PLANTED_CHECK(cudaFree(staging));

  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  const float one = 1.0f, zero = 0.0f;
  auto gemm = [&] {
    check_cublas(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a,
                                            CUDA_R_16BF, kN, stride, b, CUDA_R_16BF, kN, stride,
                                            &zero, c, CUDA_R_32F, kN, stride, kBatch,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx");
  };
  gemm();  // warm-up: cuBLAS loads its kernels lazily
  PLANTED_CHECK(cudaDeviceSynchronize());

  auto start = planted::Clock::now();
  for (long k = 0; k < calls; ++k) gemm();
  PLANTED_CHECK(cudaDeviceSynchronize());
  const double elapsed = planted::ms_since(start);

  planted::print_result(kName, opts, elapsed, planted::checksum(c, elements, kName));
  check_cublas(cublasDestroy(handle), "cublasDestroy");
  PLANTED_CHECK(cudaFree(a));
  PLANTED_CHECK(cudaFree(b));
  PLANTED_CHECK(cudaFree(c));
  return 0;
}
