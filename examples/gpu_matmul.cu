// gpu_matmul: the seed's Case 2 (gpu_matmul_case.py) with cuBLAS instead of
// PyTorch. It multiplies `repeats` pairs of tile x tile float matrices two ways:
//
//   slow_loop_sync  one cublasSgemm per tile, each followed by cudaDeviceSynchronize
//                   and wrapped in the NVTX range "slow_loop_sync_iteration": many
//                   tiny kernels, the GPU idle between them (launch/sync bound)
//   batched         one cublasSgemmStridedBatched over all tiles
//
// `--device cpu` computes the same products on the host (matmul_ref.h) without
// calling into CUDA at all, so it runs, and can be tested, where no driver or GPU
// exists.
//
//   gpu_matmul --mode slow_loop_sync|batched [--repeats 128] [--tile-size 128] [--device cuda|cpu]
//   mode=slow_loop_sync device=cuda repeats=128 tile_size=128 elapsed_ms=38.528 checksum=...
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "matmul_ref.h"

namespace {

constexpr int kMaxRepeats = 1 << 20;
constexpr int kMaxTileSize = 1 << 14;
// A, B and C together; keeps a typo from asking for terabytes.
constexpr uint64_t kMaxBytes = uint64_t{32} << 30;

void print_usage(std::FILE* to) {
  std::fprintf(to,
               "usage: gpu_matmul --mode slow_loop_sync|batched [--repeats N] [--tile-size N]\n"
               "                  [--device cuda|cpu]\n"
               "  --repeats N    matrix pairs to multiply (default 128)\n"
               "  --tile-size N  rows and columns of each matrix (default 128)\n"
               "  --device       cuda: cuBLAS on GPU 0 (default); cpu: host reference\n"
               "  (--mode batched_bmm, the seed's name, is accepted for batched)\n");
}

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "gpu_matmul: %s\n", why.c_str());
  print_usage(stderr);
  std::exit(2);
}

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "gpu_matmul: %s: %s (%s)\n", call, cudaGetErrorName(status),
               cudaGetErrorString(status));
  std::exit(1);
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "gpu_matmul: %s: %s (%s)\n", call, cublasGetStatusName(status),
               cublasGetStatusString(status));
  std::exit(1);
}

struct Options {
  std::string mode;
  bool batched = false;
  std::string device = "cuda";
  int repeats = 128;
  int tile_size = 128;
};

bool parse_int(std::string_view text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

Options parse_args(int argc, char** argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg == "--mode" || arg == "--repeats" || arg == "--tile-size" || arg == "--device") {
      if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
      value = argv[++i];
    }
    if (arg == "--help" || arg == "-h") {
      print_usage(stdout);
      std::exit(0);
    } else if (arg == "--mode") {
      if (value != "slow_loop_sync" && value != "batched" && value != "batched_bmm") {
        usage_error("--mode must be slow_loop_sync or batched, not '" + std::string(value) + "'");
      }
      opts.mode = value;
      opts.batched = value != "slow_loop_sync";
    } else if (arg == "--repeats") {
      if (!parse_int(value, opts.repeats) || opts.repeats < 1 || opts.repeats > kMaxRepeats) {
        usage_error("--repeats must be an integer in 1.." + std::to_string(kMaxRepeats) +
                    ", not '" + std::string(value) + "'");
      }
    } else if (arg == "--tile-size") {
      if (!parse_int(value, opts.tile_size) || opts.tile_size < 1 ||
          opts.tile_size > kMaxTileSize) {
        usage_error("--tile-size must be an integer in 1.." + std::to_string(kMaxTileSize) +
                    ", not '" + std::string(value) + "'");
      }
    } else if (arg == "--device") {
      if (value != "cuda" && value != "cpu") {
        usage_error("--device must be cuda or cpu, not '" + std::string(value) + "'");
      }
      opts.device = value;
    } else {
      usage_error("unknown argument '" + std::string(argv[i]) + "'");
    }
  }
  if (opts.mode.empty()) usage_error("--mode is required");
  uint64_t tile = static_cast<uint64_t>(opts.tile_size);
  if (3 * sizeof(float) * tile * tile * static_cast<uint64_t>(opts.repeats) > kMaxBytes) {
    usage_error("--repeats x --tile-size^2 needs more than 32 GiB");
  }
  return opts;
}

using Clock = std::chrono::steady_clock;

// The timed section of each run: the mode's compute only, from inputs in place to
// results complete, as the seed times it. Setup (allocation, copies, cuBLAS handle,
// a warm-up call on CUDA) stays outside.
double run_cpu(const Options& opts, const std::vector<float>& a, const std::vector<float>& b,
               std::vector<float>& c) {
  const int n = opts.tile_size;
  const size_t stride = static_cast<size_t>(n) * n;
  auto start = Clock::now();
  if (opts.batched) {
    matmul_ref::sgemm_strided_batched(n, opts.repeats, a.data(), b.data(), c.data());
  } else {
    for (size_t p = 0; p < static_cast<size_t>(opts.repeats); ++p) {
      matmul_ref::sgemm(n, a.data() + p * stride, b.data() + p * stride, c.data() + p * stride);
    }
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double run_cuda(const Options& opts, const std::vector<float>& a, const std::vector<float>& b,
                std::vector<float>& c) {
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices == 0) {
    std::fprintf(stderr, "gpu_matmul: cudaGetDeviceCount: no CUDA device\n");
    std::exit(1);
  }
  check_cuda(cudaSetDevice(0), "cudaSetDevice");

  const int n = opts.tile_size;
  const size_t stride = static_cast<size_t>(n) * n;
  const size_t bytes = a.size() * sizeof(float);
  float* d_a = nullptr;
  float* d_b = nullptr;
  float* d_c = nullptr;
  check_cuda(cudaMalloc(&d_a, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&d_b, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&d_c, bytes), "cudaMalloc");
  check_cuda(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  check_cuda(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  const float one = 1.0f;
  const float zero = 0.0f;
  auto batched_sgemm = [&] {
    check_cublas(
        cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d_a, n, stride,
                                  d_b, n, stride, &zero, d_c, n, stride, opts.repeats),
        "cublasSgemmStridedBatched");
  };
  auto tile_sgemm = [&](size_t p) {
    check_cublas(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d_a + p * stride, n,
                             d_b + p * stride, n, &zero, d_c + p * stride, n),
                 "cublasSgemm");
  };

  // One untimed call of the mode's own kind first: CUDA loads kernels lazily (the
  // default since CUDA 12.2), and loading cuBLAS's took about 100 ms on an H200
  // with CUDA 13.0, which would hide the difference between the modes. Profiles
  // still show the loading, before the timed section.
  if (opts.batched) {
    batched_sgemm();
  } else {
    tile_sgemm(0);
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  auto start = Clock::now();
  if (opts.batched) {
    batched_sgemm();
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  } else {
    for (size_t p = 0; p < static_cast<size_t>(opts.repeats); ++p) {
      nvtxRangePushA("slow_loop_sync_iteration");
      tile_sgemm(p);
      // The point of this mode: a host-device round trip per tiny kernel.
      check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      nvtxRangePop();
    }
  }
  double elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();

  check_cuda(cudaMemcpy(c.data(), d_c, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check_cublas(cublasDestroy(handle), "cublasDestroy");
  check_cuda(cudaFree(d_a), "cudaFree");
  check_cuda(cudaFree(d_b), "cudaFree");
  check_cuda(cudaFree(d_c), "cudaFree");
  return elapsed_ms;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts = parse_args(argc, argv);
  const size_t count = static_cast<size_t>(opts.repeats) * opts.tile_size * opts.tile_size;
  std::vector<float> a = matmul_ref::random_matrices(count, matmul_ref::kInputSeed);
  std::vector<float> b = matmul_ref::random_matrices(count, matmul_ref::kInputSeed + 1);
  std::vector<float> c(count);

  double elapsed_ms = opts.device == "cpu" ? run_cpu(opts, a, b, c) : run_cuda(opts, a, b, c);

  double checksum = 0.0;
  for (float v : c) checksum += v;
  std::printf("mode=%s device=%s repeats=%d tile_size=%d elapsed_ms=%.3f checksum=%.6f\n",
              opts.mode.c_str(), opts.device.c_str(), opts.repeats, opts.tile_size, elapsed_ms,
              checksum);
  return 0;
}
