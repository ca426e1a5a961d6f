// kernel_zoo: kernels of different character for checking `strata kernels`
// against `ncu --set basic` (bench/kernels_vs_ncu.py). Each case runs its
// kernel a few times with fixed sizes and verifies the result on the host.
// Every kernel accumulates into its output (y += ..., C = A*B + C, ...), so a
// result is right only if each launch ran exactly once from the program's
// point of view: a profiler whose kernel replay does not restore memory, or
// that drops or repeats a launch, makes the check fail.
//
//   gpu_kernel_zoo [--only NAME] [--repeat N] [--list]
//
// Cases, in the order they run without --only; each kernel's function name
// contains the case name, so `--kernel-name regex:zoo_elementwise` picks it:
//   zoo_sgemm_small       cublasSgemm 64x64x64 (C += A*B), N calls
//   zoo_sgemm_large       cublasSgemm 4096x4096x4096 (C += A*B), N calls
//   zoo_elementwise       y = 0.5*x + y over 64M floats, grid-stride, block 256
//   zoo_reduction         block reduction in shared memory + one atomicAdd per
//                         block, block 512, 16M unsigned ints
//   zoo_smem_limited      100 KB of dynamic shared memory per block (opt-in),
//                         block 128: occupancy limited by shared memory
//   zoo_register_limited  128 live 32-bit accumulators per thread, block 256:
//                         occupancy limited by registers (>= 128 per thread)
//   zoo_driver_launch     cuLaunchKernel, a 2D grid (256, 16, 1)
//   zoo_launch_ex         cuLaunchKernelEx with a cluster dimension (2, 1, 1);
//                         each block reads its cluster peer's shared memory
//   zoo_cooperative       cudaLaunchCooperativeKernel with a grid-wide sync
//   zoo_graph             a captured CUDA graph of 3 kernels (zoo_graph_a, _b,
//                         _c), launched 10 times (not affected by --repeat)
//
// cuBLAS kernels cannot be renamed: their names contain "gemm" (e.g.
// sm80_xmma_gemm_..._cublas). With --only zoo_sgemm_small (or _large) they are
// the only kernels in the process (inputs are filled on the host), so
// `--kernel-name regex:gemm --launch-skip 1` picks that size's second call.
// Without --only, the small case runs first: launches 0..N-1 of regex:gemm are
// the small product's and N..2N-1 the large one's, if cuBLAS launches one
// gemm-named kernel per call (it prints which kernels it ran nowhere, so
// kernels_vs_ncu.py uses --only).
//
// Prints "zoo_NAME: ok (...)" per case or "zoo_NAME: FAILED: ...", then a
// summary line. Exit status: 0 all cases verified, 1 a check or CUDA call
// failed, 2 usage error, 77 no CUDA device (ctest's skip code).
#include <cooperative_groups.h>
#include <cublas_v2.h>
#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace cg = cooperative_groups;

// The driver API through the runtime's entry points: the program links no
// libcuda, so it starts (and reports "no CUDA device") where no driver is
// installed. CUPTI sees these calls as cuLaunchKernel / cuLaunchKernelEx.
struct Driver {
  decltype(&cuLaunchKernel) launch_kernel = nullptr;
  decltype(&cuLaunchKernelEx) launch_kernel_ex = nullptr;
  decltype(&cuGetErrorName) get_error_name = nullptr;
};
static Driver g_driver;

template <typename F>
static void driver_entry(const char* symbol, unsigned version, F& out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CHECK_CUDA(cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "gpu_kernel_zoo: the driver has no %s (version %u)\n", symbol, version);
    std::exit(1);
  }
  out = reinterpret_cast<F>(fn);
}

#define CHECK_CU(call)                                                                    \
  do {                                                                                    \
    CUresult strata_cu = (call);                                                          \
    if (strata_cu != CUDA_SUCCESS) {                                                      \
      const char* strata_msg = nullptr;                                                   \
      g_driver.get_error_name(strata_cu, &strata_msg);                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   strata_msg ? strata_msg : "?");                                        \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

#define CHECK_CUBLAS(call)                                                                \
  do {                                                                                    \
    cublasStatus_t strata_cb = (call);                                                    \
    if (strata_cb != CUBLAS_STATUS_SUCCESS) {                                             \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   cublasGetStatusString(strata_cb));                                     \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

// After each launch: a bad launch configuration shows here, a fault at the sync.
#define CHECK_LAUNCH()                        \
  do {                                        \
    CHECK_CUDA(cudaGetLastError());           \
    CHECK_CUDA(cudaDeviceSynchronize());      \
  } while (0)

struct Ctx {
  int device = 0;
  cudaDeviceProp prop{};
  int repeat = 3;
};

// A failed check: prints the first few mismatches, counts all of them.
struct Verdict {
  const char* name;
  long long bad = 0;
  void mismatch(const char* what, long long index, double got, double want) {
    if (bad++ < 5) {
      std::printf("%s: mismatch %s[%lld]: got %.9g, want %.9g\n", name, what, index, got, want);
    }
  }
  int report(const std::string& detail) const {
    if (bad == 0) {
      std::printf("%s: ok (%s)\n", name, detail.c_str());
      return 0;
    }
    std::printf("%s: FAILED: %lld mismatches (%s)\n", name, bad, detail.c_str());
    return 1;
  }
};

// A fixed-seed generator, the same numbers on every machine.
struct Lcg {
  uint64_t s;
  explicit Lcg(uint64_t seed) : s(seed) {}
  float uniform() {  // [0, 1), 24 random bits
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>(s >> 40) * (1.0f / 16777216.0f);
  }
};

// ---------------------------------------------------------------- cuBLAS sgemm

static int run_sgemm(const Ctx& ctx, const char* name, int n, int samples) {
  size_t elems = static_cast<size_t>(n) * n;
  std::vector<float> a(elems), b(elems);
  Lcg rng(20261201u + n);
  for (auto& v : a) v = rng.uniform();
  for (auto& v : b) v = rng.uniform();
  float *da, *db, *dc;
  CHECK_CUDA(cudaMalloc(&da, elems * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&db, elems * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dc, elems * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(da, a.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(db, b.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  // Zeros copied from the host rather than cudaMemset: the process then runs no
  // kernel but cuBLAS's, whatever the runtime does for a memset.
  std::vector<float> c(elems, 0.0f);
  CHECK_CUDA(cudaMemcpy(dc, c.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  // Plain FP32: no TF32 tensor cores, so the host reference bounds the error.
  CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const float alpha = 1.0f, beta = 1.0f;  // C += A*B: each call adds one product
  for (int r = 0; r < ctx.repeat; ++r) {
    CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, da, n, db, n,
                             &beta, dc, n));
    CHECK_LAUNCH();
  }
  CHECK_CUDA(cudaMemcpy(c.data(), dc, elems * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaFree(da));
  CHECK_CUDA(cudaFree(db));
  CHECK_CUDA(cudaFree(dc));

  // Column-major: C(i, j) = sum_k A(i, k) B(k, j). Every entry for a small n,
  // an even spread of `samples` entries for a large one.
  Verdict v{name};
  size_t total = samples > 0 ? static_cast<size_t>(samples) : elems;
  for (size_t s = 0; s < total; ++s) {
    size_t idx = samples > 0 ? (s * 2654435761ULL) % elems : s;
    size_t i = idx % n, j = idx / n;
    double want = 0, mag = 0;
    for (int k = 0; k < n; ++k) {
      double p = static_cast<double>(a[i + static_cast<size_t>(k) * n]) * b[k + j * n];
      want += p;
      mag += std::fabs(p);
    }
    want *= ctx.repeat;
    mag *= ctx.repeat;
    // FP32 accumulation over n terms: well inside n * 2^-24 of the magnitude.
    if (std::fabs(c[idx] - want) > 1e-3 * mag + 1e-6) v.mismatch("C", idx, c[idx], want);
  }
  return v.report(std::to_string(ctx.repeat) + " calls " + std::to_string(n) + "^3, " +
                  std::to_string(total) + " entries checked");
}

static int case_sgemm_small(const Ctx& ctx) { return run_sgemm(ctx, "zoo_sgemm_small", 64, 0); }
static int case_sgemm_large(const Ctx& ctx) { return run_sgemm(ctx, "zoo_sgemm_large", 4096, 512); }

// ---------------------------------------------------------------- elementwise

__global__ void zoo_fill_quarter_steps(float* x, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x[i] = static_cast<float>(i % 1000) * 0.25f;
  }
}

__global__ void zoo_fill_value(float* x, size_t n, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x[i] = value;
  }
}

// Memory bound: 12 bytes moved per 1 FMA.
__global__ void zoo_elementwise_saxpy(const float* __restrict__ x, float* __restrict__ y,
                                      float a, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    y[i] = fmaf(a, x[i], y[i]);
  }
}

static int case_elementwise(const Ctx& ctx) {
  const size_t n = size_t{64} << 20;
  float *x, *y;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, n * sizeof(float)));
  int grid = ctx.prop.multiProcessorCount * 8;  // 8 blocks of 256 = a full SM, twice over the loop
  zoo_fill_quarter_steps<<<grid, 256>>>(x, n);
  zoo_fill_value<<<grid, 256>>>(y, n, 1.0f);
  CHECK_LAUNCH();
  for (int r = 0; r < ctx.repeat; ++r) {
    zoo_elementwise_saxpy<<<grid, 256>>>(x, y, 0.5f, n);
    CHECK_LAUNCH();
  }
  std::vector<float> h(n);
  CHECK_CUDA(cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  // Multiples of 1/8 below 400: every step is exact in FP32.
  Verdict v{"zoo_elementwise"};
  for (size_t i = 0; i < n; ++i) {
    float want = 1.0f + ctx.repeat * 0.5f * (static_cast<float>(i % 1000) * 0.25f);
    if (h[i] != want) v.mismatch("y", static_cast<long long>(i), h[i], want);
  }
  return v.report(std::to_string(ctx.repeat) + " launches <<<" + std::to_string(grid) +
                  ", 256>>> over 64M floats");
}

// ---------------------------------------------------------------- reduction

__global__ void zoo_fill_mod(unsigned* x, size_t n, unsigned mod) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x[i] = static_cast<unsigned>(i % mod);
  }
}

constexpr int kReduceBlock = 512;

__global__ void __launch_bounds__(kReduceBlock) zoo_reduction_sum(const unsigned* __restrict__ x,
                                                                  size_t n,
                                                                  unsigned long long* out) {
  __shared__ unsigned long long partial[kReduceBlock];
  unsigned long long sum = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    sum += x[i];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kReduceBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

static int case_reduction(const Ctx& ctx) {
  const size_t n = size_t{16} << 20;
  unsigned* x;
  unsigned long long* out;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&out, sizeof(unsigned long long)));
  CHECK_CUDA(cudaMemset(out, 0, sizeof(unsigned long long)));
  int grid = ctx.prop.multiProcessorCount * 4;  // 4 blocks of 512 fill an SM
  zoo_fill_mod<<<grid, 256>>>(x, n, 1024);
  CHECK_LAUNCH();
  for (int r = 0; r < ctx.repeat; ++r) {
    zoo_reduction_sum<<<grid, kReduceBlock>>>(x, n, out);  // accumulates: no reset between
    CHECK_LAUNCH();
  }
  unsigned long long got = 0;
  CHECK_CUDA(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(out));
  unsigned long long want = static_cast<unsigned long long>(ctx.repeat) * (n / 1024) *
                            (1023ULL * 1024ULL / 2ULL);
  Verdict v{"zoo_reduction"};
  if (got != want) v.mismatch("sum", 0, static_cast<double>(got), static_cast<double>(want));
  return v.report(std::to_string(ctx.repeat) + " launches <<<" + std::to_string(grid) +
                  ", 512>>> over 16M unsigned ints, sum " + std::to_string(got));
}

// ---------------------------------------------------------------- shared memory limited

constexpr int kSmemBytes = 100 * 1024;
constexpr int kSmemTile = kSmemBytes / sizeof(float);  // 25600 floats per block

// Each block stages a 100 KB tile in shared memory and adds it, reversed, to
// the output. Two blocks fit in an SM's 228 KB: shared memory limits occupancy.
__global__ void zoo_smem_limited_reverse(const float* __restrict__ in, float* __restrict__ out,
                                         int tiles) {
  extern __shared__ float tile[];
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const float* src = in + static_cast<size_t>(t) * kSmemTile;
    float* dst = out + static_cast<size_t>(t) * kSmemTile;
    for (int j = threadIdx.x; j < kSmemTile; j += blockDim.x) tile[j] = src[j];
    __syncthreads();
    for (int j = threadIdx.x; j < kSmemTile; j += blockDim.x) dst[j] += tile[kSmemTile - 1 - j];
    __syncthreads();
  }
}

__global__ void zoo_fill_mod_float(float* x, size_t n, unsigned mod) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x[i] = static_cast<float>(i % mod);
  }
}

static int case_smem_limited(const Ctx& ctx) {
  if (ctx.prop.sharedMemPerBlockOptin < static_cast<size_t>(kSmemBytes)) {
    std::printf("zoo_smem_limited: FAILED: the device allows %zu bytes of shared memory per block,"
                " the case needs %d\n", ctx.prop.sharedMemPerBlockOptin, kSmemBytes);
    return 1;
  }
  CHECK_CUDA(cudaFuncSetAttribute(zoo_smem_limited_reverse,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const int tiles = ctx.prop.multiProcessorCount * 8;
  const size_t n = static_cast<size_t>(tiles) * kSmemTile;
  float *in, *out;
  CHECK_CUDA(cudaMalloc(&in, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&out, n * sizeof(float)));
  CHECK_CUDA(cudaMemset(out, 0, n * sizeof(float)));
  zoo_fill_mod_float<<<ctx.prop.multiProcessorCount * 8, 256>>>(in, n, 4099);
  CHECK_LAUNCH();
  const int grid = ctx.prop.multiProcessorCount * 4;  // 2 resident per SM: two waves
  for (int r = 0; r < ctx.repeat; ++r) {
    zoo_smem_limited_reverse<<<grid, 128, kSmemBytes>>>(in, out, tiles);
    CHECK_LAUNCH();
  }
  std::vector<float> h(n);
  CHECK_CUDA(cudaMemcpy(h.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(in));
  CHECK_CUDA(cudaFree(out));
  Verdict v{"zoo_smem_limited"};
  for (size_t i = 0; i < n; ++i) {
    size_t t = i / kSmemTile, j = i % kSmemTile;
    size_t src = t * kSmemTile + (kSmemTile - 1 - j);
    float want = static_cast<float>(ctx.repeat) * static_cast<float>(src % 4099);  // exact
    if (h[i] != want) v.mismatch("out", static_cast<long long>(i), h[i], want);
  }
  return v.report(std::to_string(ctx.repeat) + " launches <<<" + std::to_string(grid) +
                  ", 128, " + std::to_string(kSmemBytes) + ">>>");
}

// ---------------------------------------------------------------- register limited

// #pragma unroll for the device compiler only (the host compiler warns on it).
#if defined(__CUDA_ARCH__)
#define ZOO_UNROLL _Pragma("unroll")
#else
#define ZOO_UNROLL
#endif

constexpr int kRegAcc = 128;
constexpr int kRegIters = 48;

// The same mixing step on host and device, in the same order: all kRegAcc
// values stay live across iterations (acc[k] reads acc[k+1] before it is
// updated and the new acc[0..k-1] are read in the next iteration), so with
// the loops unrolled they sit in registers: ptxas reports >= 128 per thread.
__host__ __device__ inline void reg_mix(unsigned (&acc)[kRegAcc]) {
ZOO_UNROLL
  for (int k = 0; k < kRegAcc; ++k) {
    acc[k] = acc[k] * 1664525u + (acc[(k + 1) % kRegAcc] ^ (acc[(k + 37) % kRegAcc] >> 3));
  }
}

__host__ __device__ inline unsigned reg_thread_result(unsigned tid, int iters) {
  unsigned acc[kRegAcc];
ZOO_UNROLL
  for (int k = 0; k < kRegAcc; ++k) acc[k] = tid * 2654435761u + k * 40503u;
  for (int it = 0; it < iters; ++it) reg_mix(acc);
  unsigned sum = 0;
ZOO_UNROLL
  for (int k = 0; k < kRegAcc; ++k) sum += acc[k] * (2u * k + 1u);
  return sum;
}

// (256, 1): ptxas may use up to 255 registers per thread.
__global__ void __launch_bounds__(256, 1) zoo_register_limited_mix(unsigned* out, int iters) {
  unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  out[tid] += reg_thread_result(tid, iters);
}

static int case_register_limited(const Ctx& ctx) {
  cudaFuncAttributes attr{};
  CHECK_CUDA(cudaFuncGetAttributes(&attr, zoo_register_limited_mix));
  const int grid = ctx.prop.multiProcessorCount * 2;
  const unsigned threads = static_cast<unsigned>(grid) * 256u;
  unsigned* out;
  CHECK_CUDA(cudaMalloc(&out, threads * sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(out, 0, threads * sizeof(unsigned)));
  for (int r = 0; r < ctx.repeat; ++r) {
    zoo_register_limited_mix<<<grid, 256>>>(out, kRegIters);
    CHECK_LAUNCH();
  }
  std::vector<unsigned> h(threads);
  CHECK_CUDA(cudaMemcpy(h.data(), out, threads * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(out));
  Verdict v{"zoo_register_limited"};
  if (attr.numRegs < 128) {
    std::printf("zoo_register_limited: the kernel has %d registers per thread, the case wants"
                " >= 128 (rebuilt with other flags?)\n", attr.numRegs);
    v.bad++;
  }
  if (attr.localSizeBytes > 0) {
    std::printf("zoo_register_limited: note: %zu bytes of local memory per thread (spills)\n",
                static_cast<size_t>(attr.localSizeBytes));
  }
  // Every 31st thread and the last: a launch run twice changes them all alike.
  std::vector<unsigned> checked;
  for (unsigned t = 0; t < threads; t += 31) checked.push_back(t);
  checked.push_back(threads - 1);
  for (unsigned t : checked) {
    unsigned want = static_cast<unsigned>(ctx.repeat) * reg_thread_result(t, kRegIters);
    if (h[t] != want) v.mismatch("out", t, h[t], want);
  }
  return v.report(std::to_string(ctx.repeat) + " launches <<<" + std::to_string(grid) +
                  ", 256>>>, " + std::to_string(attr.numRegs) + " registers per thread");
}

// ---------------------------------------------------------------- driver API launches

__global__ void zoo_driver_launch_step(unsigned* x, unsigned n) {
  unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 3u + 1u;
}

static CUfunction driver_function(const void* symbol) {
  cudaFunction_t f;
  CHECK_CUDA(cudaGetFuncBySymbol(&f, symbol));  // loads the module (lazy loading)
  return reinterpret_cast<CUfunction>(f);
}

static int case_driver_launch(const Ctx& ctx) {
  const unsigned gx = 256, gy = 16, block = 256;
  unsigned n = gx * gy * block;  // 1M
  std::vector<unsigned> h(n);
  for (unsigned i = 0; i < n; ++i) h[i] = i;
  unsigned* x;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMemcpy(x, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  CUfunction f = driver_function(reinterpret_cast<const void*>(zoo_driver_launch_step));
  void* args[] = {&x, &n};
  for (int r = 0; r < ctx.repeat; ++r) {
    CHECK_CU(g_driver.launch_kernel(f, gx, gy, 1, block, 1, 1, 0, nullptr, args, nullptr));
    CHECK_LAUNCH();
  }
  CHECK_CUDA(cudaMemcpy(h.data(), x, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(x));
  Verdict v{"zoo_driver_launch"};
  for (unsigned i = 0; i < n; ++i) {
    unsigned want = i;
    for (int r = 0; r < ctx.repeat; ++r) want = want * 3u + 1u;
    if (h[i] != want) v.mismatch("x", i, h[i], want);
  }
  return v.report(std::to_string(ctx.repeat) + " cuLaunchKernel (256, 16, 1)x(256, 1, 1)");
}

// Each block of a 2-block cluster reads its peer's shared memory (distributed
// shared memory): right only if the launch really had the cluster dimension.
__global__ void zoo_launch_ex_cluster(unsigned* out) {
  __shared__ unsigned tag;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) tag = blockIdx.x * 1000u + 7u;
  cluster.sync();
  const unsigned* peer = cluster.map_shared_rank(&tag, cluster.block_rank() ^ 1u);
  unsigned seen = *peer;
  cluster.sync();  // the peer's shared memory must outlive the read
  if (threadIdx.x == 0) out[blockIdx.x] += seen;
}

static int case_launch_ex(const Ctx& ctx) {
  const unsigned grid = static_cast<unsigned>(ctx.prop.multiProcessorCount) * 2;  // even
  unsigned* out;
  CHECK_CUDA(cudaMalloc(&out, grid * sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(out, 0, grid * sizeof(unsigned)));
  CUfunction f = driver_function(reinterpret_cast<const void*>(zoo_launch_ex_cluster));
  CUlaunchAttribute attr[1];
  std::memset(attr, 0, sizeof(attr));
  attr[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr[0].value.clusterDim.x = 2;
  attr[0].value.clusterDim.y = 1;
  attr[0].value.clusterDim.z = 1;
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof(config));
  config.gridDimX = grid;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = nullptr;
  config.attrs = attr;
  config.numAttrs = 1;
  void* args[] = {&out};
  for (int r = 0; r < ctx.repeat; ++r) {
    CHECK_CU(g_driver.launch_kernel_ex(&config, f, args, nullptr));
    CHECK_LAUNCH();
  }
  std::vector<unsigned> h(grid);
  CHECK_CUDA(cudaMemcpy(h.data(), out, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(out));
  Verdict v{"zoo_launch_ex"};
  for (unsigned b = 0; b < grid; ++b) {
    unsigned want = static_cast<unsigned>(ctx.repeat) * ((b ^ 1u) * 1000u + 7u);
    if (h[b] != want) v.mismatch("out", b, h[b], want);
  }
  return v.report(std::to_string(ctx.repeat) + " cuLaunchKernelEx (" + std::to_string(grid) +
                  ", 1, 1)x(128, 1, 1) cluster (2, 1, 1)");
}

// ---------------------------------------------------------------- cooperative launch

// Phase 2 reads what other blocks wrote in phase 1: wrong without grid.sync().
__global__ void zoo_cooperative_sync(unsigned* a, unsigned* b, unsigned n) {
  cg::grid_group grid = cg::this_grid();
  for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size()) a[i] += i % 97;
  grid.sync();
  for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size()) {
    b[i] += a[(i + n / 2) % n];
  }
}

static int case_cooperative(const Ctx& ctx) {
  if (!ctx.prop.cooperativeLaunch) {
    std::printf("zoo_cooperative: FAILED: the device does not support cooperative launches\n");
    return 1;
  }
  int per_sm = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, zoo_cooperative_sync, 256, 0));
  if (per_sm < 1) {
    std::printf("zoo_cooperative: FAILED: no block of 256 threads fits an SM\n");
    return 1;
  }
  unsigned grid = static_cast<unsigned>(ctx.prop.multiProcessorCount * (per_sm < 2 ? per_sm : 2));
  unsigned n = 1u << 22;
  unsigned *a, *b;
  CHECK_CUDA(cudaMalloc(&a, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&b, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(a, 0, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(b, 0, n * sizeof(unsigned)));
  void* args[] = {&a, &b, &n};
  for (int r = 0; r < ctx.repeat; ++r) {
    CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(zoo_cooperative_sync),
                                           dim3(grid), dim3(256), args, 0, nullptr));
    CHECK_LAUNCH();
  }
  std::vector<unsigned> h(n);
  CHECK_CUDA(cudaMemcpy(h.data(), b, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  // After launch r, a[j] = r * (j % 97), so b[i] = (1 + ... + R) * (j % 97).
  unsigned tri = static_cast<unsigned>(ctx.repeat * (ctx.repeat + 1) / 2);
  Verdict v{"zoo_cooperative"};
  for (unsigned i = 0; i < n; ++i) {
    unsigned j = static_cast<unsigned>((static_cast<unsigned long long>(i) + n / 2) % n);
    unsigned want = tri * (j % 97);
    if (h[i] != want) v.mismatch("b", i, h[i], want);
  }
  return v.report(std::to_string(ctx.repeat) + " cooperative launches <<<" +
                  std::to_string(grid) + ", 256>>>");
}

// ---------------------------------------------------------------- CUDA graph

__global__ void zoo_graph_a(unsigned* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1u;
}
__global__ void zoo_graph_b(const unsigned* x, unsigned* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}
__global__ void zoo_graph_c(const unsigned* y, unsigned* z, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] += 2u * y[i];
}

static int case_graph(const Ctx&) {
  const int replays = 10;
  unsigned n = 1u << 20;
  std::vector<unsigned> x(n), y(n), z(n);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = i;
    y[i] = i % 13;
    z[i] = 5;
  }
  unsigned *dx, *dy, *dz;
  CHECK_CUDA(cudaMalloc(&dx, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&dy, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&dz, n * sizeof(unsigned)));
  CHECK_CUDA(cudaMemcpy(dx, x.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dy, y.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dz, z.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  unsigned blocks = (n + 255) / 256;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  zoo_graph_a<<<blocks, 256, 0, stream>>>(dx, n);
  zoo_graph_b<<<blocks, 256, 0, stream>>>(dx, dy, n);
  zoo_graph_c<<<blocks, 256, 0, stream>>>(dy, dz, n);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < replays; ++r) {
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  CHECK_CUDA(cudaGetLastError());
  std::vector<unsigned> gz(n);
  CHECK_CUDA(cudaMemcpy(gz.data(), dz, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  CHECK_CUDA(cudaFree(dz));
  Verdict v{"zoo_graph"};
  for (unsigned i = 0; i < n; ++i) {
    unsigned xi = x[i], yi = y[i], zi = z[i];
    for (int r = 0; r < replays; ++r) {
      xi += 1u;
      yi += xi;
      zi += 2u * yi;
    }
    if (gz[i] != zi) v.mismatch("z", i, gz[i], zi);
  }
  return v.report(std::to_string(replays) + " graph launches of zoo_graph_a, _b, _c <<<" +
                  std::to_string(blocks) + ", 256>>>");
}

// ---------------------------------------------------------------- main

struct Case {
  const char* name;
  int (*run)(const Ctx&);
};

static const Case kCases[] = {
    {"zoo_sgemm_small", case_sgemm_small},
    {"zoo_sgemm_large", case_sgemm_large},
    {"zoo_elementwise", case_elementwise},
    {"zoo_reduction", case_reduction},
    {"zoo_smem_limited", case_smem_limited},
    {"zoo_register_limited", case_register_limited},
    {"zoo_driver_launch", case_driver_launch},
    {"zoo_launch_ex", case_launch_ex},
    {"zoo_cooperative", case_cooperative},
    {"zoo_graph", case_graph},
};

[[noreturn]] static void usage(const char* why) {
  std::fprintf(stderr,
               "gpu_kernel_zoo: %s\nusage: gpu_kernel_zoo [--only NAME] [--repeat N] [--list]\n",
               why);
  std::exit(2);
}

int main(int argc, char** argv) {
  std::string only;
  Ctx ctx;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--list") {
      for (const auto& c : kCases) std::printf("%s\n", c.name);
      return 0;
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--repeat" && i + 1 < argc) {
      char* end = nullptr;
      long r = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || r < 1 || r > 1000) usage("--repeat must be an integer in 1..1000");
      ctx.repeat = static_cast<int>(r);
    } else if (arg == "--help" || arg == "-h") {
      usage("kernels of different character, each verified on the host");
    } else {
      usage(("unknown or incomplete argument '" + arg + "'").c_str());
    }
  }
  bool known = only.empty();
  for (const auto& c : kCases) known = known || only == c.name;
  if (!known) usage(("no case named '" + only + "' (see --list)").c_str());

  int devices = 0;
  cudaError_t rc = cudaGetDeviceCount(&devices);
  if (rc != cudaSuccess || devices == 0) {
    std::printf("gpu_kernel_zoo: no CUDA device (%s): skipped\n",
                rc == cudaSuccess ? "0 devices" : cudaGetErrorString(rc));
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(ctx.device));
  CHECK_CUDA(cudaGetDeviceProperties(&ctx.prop, ctx.device));
  CHECK_CUDA(cudaFree(nullptr));  // the primary context, current for the driver API calls
  driver_entry("cuLaunchKernel", 4000, g_driver.launch_kernel);
  driver_entry("cuLaunchKernelEx", 11060, g_driver.launch_kernel_ex);
  driver_entry("cuGetErrorName", 6000, g_driver.get_error_name);
  std::printf("gpu_kernel_zoo: %s, %d SMs, CC %d.%d, repeat %d\n", ctx.prop.name,
              ctx.prop.multiProcessorCount, ctx.prop.major, ctx.prop.minor, ctx.repeat);
  std::fflush(stdout);
  int failed = 0, ran = 0;
  for (const auto& c : kCases) {
    if (!only.empty() && only != c.name) continue;
    failed += c.run(ctx);
    ++ran;
    std::fflush(stdout);
  }
  std::printf("gpu_kernel_zoo: %d of %d cases verified\n", ran - failed, ran);
  return failed == 0 ? 0 : 1;
}
