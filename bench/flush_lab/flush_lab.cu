// flush_lab: one kernel of the zoo's kind, run after a chosen sequence of the
// agent's own flush kernels, so that ncu can measure it there with every
// metric it has (bench/flush_lab/run.sh): under `--replay-mode application
// --cache-control none` every pass re-runs the program, flush included, and
// ncu touches no cache itself. Set beside ncu's own flush (kernel replay,
// `--cache-control all`), it shows what a flush step changes, which
// strata kernels' own metrics cannot (docs/PERFORMANCE.md, "Instruction
// caches and an empty L2").
//
//   LAB_FLUSH=STEPS flush_lab CASE
//   CASE: sgemm (cuBLAS 64^3), reduction (64 MB), step (4 MB read-modify-write,
//         grid 256x16), cluster (2-block clusters, distributed shared memory)
//   STEPS: comma list, run in that order before each measured launch:
//          icache (the instruction sweep), l2sweep, discard, touch (the kernel's
//          allocations); empty or unset: none
// The case's kernel runs once unflushed (launch 0), then 3 times, each after
// the steps (launches 1-3: ncu --launch-skip 1 --launch-count 3; measure()).
// LAB_TIME=1 prints how long the steps before the L2 sweep and from it on took.
//
// Build here (the GPU machine has no compiler for it):
//   nvcc -O2 -arch=sm_90 -std=c++17 -I src -o build-lab/flush_lab \
//     bench/flush_lab/flush_lab.cu -lcublas -lcuda
#include <cooperative_groups.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// The agent's own kernels and the instruction sweep's PTX.
#include "../../src/agent/kernels/instruction_sweep_ptx.cc"
#include "../../src/agent/kernels/l2_discard.cu"
#include "../../src/agent/kernels/l2_sweep.cu"

namespace cg = cooperative_groups;

#define CHECK(call)                                                        \
  do {                                                                     \
    cudaError_t err_ = (call);                                             \
    if (err_ != cudaSuccess) {                                             \
      std::printf("flush_lab: %s: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

// ---------------------------------------------------------------- the cases' kernels
// As tests/gpu/kernel_zoo.cu's, under lab_ names.

__global__ void lab_fill(unsigned* x, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x[i] = static_cast<unsigned>(i % 1024);
  }
}

__global__ void lab_reduction_sum(const unsigned* __restrict__ x, size_t n,
                                  unsigned long long* out) {
  __shared__ unsigned long long partial[512];
  unsigned long long sum = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    sum += x[i];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = 256; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

__global__ void lab_step(unsigned* x, unsigned n) {
  unsigned i = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 3u + 1u;
}

__global__ void __cluster_dims__(2, 1, 1) lab_cluster(unsigned* out) {
  __shared__ unsigned tag;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) tag = blockIdx.x * 1000u + 7u;
  cluster.sync();
  const unsigned* peer = cluster.map_shared_rank(&tag, cluster.block_rank() ^ 1u);
  unsigned seen = *peer;
  cluster.sync();
  if (threadIdx.x == 0) out[blockIdx.x] += seen;
}

// ---------------------------------------------------------------- the flush

struct Flush {
  std::vector<std::string> steps;
  int sms = 0;
  uint4* buffer = nullptr;  // twice the L2, zeros
  size_t buffer_bytes = 0;
  unsigned* sink = nullptr;
  StrataTouchRange* ranges = nullptr;
  unsigned range_count = 0;
  CUfunction instruction_sweep = nullptr;
  bool timed = false;

  void set_up(const char* spec) {
    for (std::string rest = spec ? spec : ""; !rest.empty();) {
      size_t comma = rest.find(',');
      steps.push_back(rest.substr(0, comma));
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    sms = prop.multiProcessorCount;
    buffer_bytes = 2 * size_t(prop.l2CacheSize);
    CHECK(cudaMalloc(&buffer, buffer_bytes));
    CHECK(cudaMemset(buffer, 0, buffer_bytes));
    CHECK(cudaMalloc(&sink, sizeof(unsigned)));
    CHECK(cudaMalloc(&ranges, 32 * sizeof(StrataTouchRange)));
    // As the agent loads it (src/agent/kernels/cache_flush.cc).
    const std::string ptx = strata::agent::kernels::instruction_sweep_ptx();
    CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void* values[] = {nullptr};  // level 0
    CUmodule module;
    if (cuModuleLoadDataEx(&module, ptx.c_str(), 1, options, values) != CUDA_SUCCESS ||
        cuModuleGetFunction(&instruction_sweep, module,
                            strata::agent::kernels::kInstructionSweepEntry) != CUDA_SUCCESS) {
      std::printf("flush_lab: the instruction sweep did not load\n");
      std::exit(1);
    }
    timed = std::getenv("LAB_TIME") != nullptr;
  }
  void touch(std::vector<StrataTouchRange> of) {
    range_count = static_cast<unsigned>(of.size());
    CHECK(cudaMemcpy(ranges, of.data(), of.size() * sizeof(of[0]), cudaMemcpyHostToDevice));
  }
  // The steps, back to back on the null stream, as the agent enqueues them.
  void run() {
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t begin, sweep_begins, end;
    if (timed) {
      cudaEventCreate(&begin);
      cudaEventCreate(&sweep_begins);
      cudaEventCreate(&end);
      cudaEventRecord(begin);
    }
    for (const std::string& step : steps) {
      if (step == "icache") {
        void* args[] = {&sink};
        cuLaunchKernel(instruction_sweep, 2 * sms, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr);
      } else if (step == "l2sweep") {
        if (timed) cudaEventRecord(sweep_begins);
        strata_l2_sweep<<<4 * sms, 512>>>(buffer, buffer_bytes / sizeof(uint4), sink);
      } else if (step == "discard") {
        strata_l2_discard<<<4 * sms, 512>>>(reinterpret_cast<char*>(buffer), buffer_bytes);
      } else if (step == "touch") {
        if (range_count > 0) strata_touch_pages<<<range_count, 256>>>(ranges, sink);
      } else {
        std::printf("flush_lab: unknown step %s\n", step.c_str());
        std::exit(2);
      }
    }
    CHECK(cudaGetLastError());
    if (timed) {
      cudaEventRecord(end);
      cudaEventSynchronize(end);
      float before_sweep = 0, from_sweep = 0;
      cudaEventElapsedTime(&before_sweep, begin, sweep_begins);
      cudaEventElapsedTime(&from_sweep, sweep_begins, end);
      std::printf("flush: before the L2 sweep %.1f us, from it on %.1f us\n", before_sweep * 1e3,
                  from_sweep * 1e3);
    }
  }
};

// The case's kernel once unflushed (launch 0), then kMeasured times, each
// after the flush's steps (launches 1-3).
template <typename Launch>
void measure(Flush& flush, Launch launch) {
  constexpr int kMeasured = 3;
  launch();
  for (int r = 0; r < kMeasured; ++r) {
    flush.run();
    launch();
  }
}

StrataTouchRange whole(const void* p, size_t bytes) {
  return {reinterpret_cast<unsigned long long>(p), bytes};
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: LAB_FLUSH=STEPS flush_lab sgemm|reduction|step|cluster\n");
    return 2;
  }
  const std::string which = argv[1];
  Flush flush;
  flush.set_up(std::getenv("LAB_FLUSH"));
  const int sms = flush.sms;
  if (which == "sgemm") {
    const int n = 64;
    const size_t bytes = size_t(n) * n * sizeof(float);
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMalloc(&c, bytes));
    std::vector<float> halves(size_t(n) * n, 0.5f);
    for (float* m : {a, b, c}) CHECK(cudaMemcpy(m, halves.data(), bytes, cudaMemcpyHostToDevice));
    flush.touch({whole(a, bytes), whole(b, bytes), whole(c, bytes)});
    cublasHandle_t handle;
    cublasCreate(&handle);
    cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);
    const float alpha = 1, beta = 1;
    measure(flush, [&] {
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n);
    });
  } else if (which == "reduction") {
    const size_t n = size_t{16} << 20;
    unsigned* x;
    unsigned long long* out;
    CHECK(cudaMalloc(&x, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&out, sizeof(*out)));
    CHECK(cudaMemset(out, 0, sizeof(*out)));
    lab_fill<<<4 * sms, 256>>>(x, n);
    flush.touch({whole(x, n * sizeof(unsigned)), whole(out, sizeof(*out))});
    measure(flush, [&] { lab_reduction_sum<<<4 * sms, 512>>>(x, n, out); });
  } else if (which == "step") {
    const unsigned n = 256 * 16 * 256;
    unsigned* x;
    CHECK(cudaMalloc(&x, n * sizeof(unsigned)));
    CHECK(cudaMemset(x, 0, n * sizeof(unsigned)));
    flush.touch({whole(x, n * sizeof(unsigned))});
    measure(flush, [&] { lab_step<<<dim3(256, 16), 256>>>(x, n); });
  } else if (which == "cluster") {
    const unsigned grid = 2 * sms;
    unsigned* out;
    CHECK(cudaMalloc(&out, grid * sizeof(unsigned)));
    CHECK(cudaMemset(out, 0, grid * sizeof(unsigned)));
    flush.touch({whole(out, grid * sizeof(unsigned))});
    measure(flush, [&] { lab_cluster<<<grid, 128>>>(out); });
  } else {
    std::fprintf(stderr, "flush_lab: unknown case %s\n", which.c_str());
    return 2;
  }
  CHECK(cudaDeviceSynchronize());
  std::printf("flush_lab %s [%s]: ok\n", which.c_str(),
              std::getenv("LAB_FLUSH") ? std::getenv("LAB_FLUSH") : "");
  return 0;
}
