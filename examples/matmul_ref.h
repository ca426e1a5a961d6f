// gpu_matmul's inputs and CPU reference: the products cuBLAS computes there, with
// cuBLAS's conventions (column-major storage, no transposition, alpha = 1,
// beta = 0), so that `gpu_matmul --device cpu` gives the GPU's checksum without a
// GPU.
//
// Pure functions, no CUDA: tests include this header directly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace matmul_ref {

inline constexpr uint64_t kInputSeed = 20260404;

// `count` floats uniform in [0, 1) from splitmix64: deterministic on every
// platform, and all positive so that a checksum never cancels to near zero, where
// a relative comparison between GPU and CPU results would mean nothing.
inline std::vector<float> random_matrices(size_t count, uint64_t seed) {
  std::vector<float> values(count);
  uint64_t state = seed;
  for (float& v : values) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = static_cast<float>(z >> 40) * 0x1.0p-24f;
  }
  return values;
}

// C = A * B for n x n column-major matrices (element (i, j) at [i + j * n]), as
// cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n).
//
// The loops run j, k, i so that the innermost one walks columns contiguously and
// vectorizes; sums are kept in double so that the reference is more accurate than
// the float GPU results it is compared with.
inline void sgemm(int n, const float* a, const float* b, float* c) {
  const size_t ld = static_cast<size_t>(n);
  std::vector<double> column(ld);
  for (size_t j = 0; j < ld; ++j) {
    std::fill(column.begin(), column.end(), 0.0);
    for (size_t k = 0; k < ld; ++k) {
      const double b_kj = b[k + j * ld];
      const float* a_col = a + k * ld;
      for (size_t i = 0; i < ld; ++i) column[i] += static_cast<double>(a_col[i]) * b_kj;
    }
    for (size_t i = 0; i < ld; ++i) c[i + j * ld] = static_cast<float>(column[i]);
  }
}

// `batch` products of consecutive n x n matrices, as cublasSgemmStridedBatched with
// every stride n * n.
inline void sgemm_strided_batched(int n, int batch, const float* a, const float* b, float* c) {
  const size_t stride = static_cast<size_t>(n) * static_cast<size_t>(n);
  for (size_t p = 0; p < static_cast<size_t>(batch); ++p) {
    sgemm(n, a + p * stride, b + p * stride, c + p * stride);
  }
}

}  // namespace matmul_ref
