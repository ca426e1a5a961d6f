// What every native planted-bottleneck workload shares (examples/planted/README.md):
// the command line, error checks that name the failing call, the timer and the one
// output line the suite's checks and bench/diagnose_planted.py read.
//
//   NAME [--fixed] [--scale X]
//   workload=NAME variant=planted|fixed elapsed_ms=123.456 checksum=...
//
// --fixed removes the planted cause and does the same work: the checksum is the
// same in both variants, bit for bit (the tests compare it). --scale multiplies the
// amount of work (the loop's iterations), so that a slower or faster GPU can be
// brought back to the suite's 0.3-2 s.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace planted {

struct Options {
  bool fixed = false;
  double scale = 1.0;
};

inline void print_usage(const char* name, std::FILE* to) {
  std::fprintf(to,
               "usage: %s [--fixed] [--scale X]\n"
               "  --fixed    the same work without the planted bottleneck\n"
               "  --scale X  multiply the work by X (default 1, 0 < X <= 1000)\n",
               name);
}

[[noreturn]] inline void usage_error(const char* name, const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", name, why.c_str());
  print_usage(name, stderr);
  std::exit(2);
}

inline Options parse_args(const char* name, int argc, char** argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--fixed") {
      opts.fixed = true;
    } else if (arg == "--scale") {
      if (i + 1 >= argc) usage_error(name, "--scale needs a value");
      char* end = nullptr;
      opts.scale = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(opts.scale > 0.0 && opts.scale <= 1000.0)) {
        usage_error(name, std::string("--scale must be a number in (0, 1000], not '") + argv[i] +
                              "'");
      }
    } else if (arg == "--help" || arg == "-h") {
      print_usage(name, stdout);
      std::exit(0);
    } else {
      usage_error(name, "unknown argument '" + std::string(arg) + "'");
    }
  }
  return opts;
}

// At least one iteration, whatever the scale.
inline long scaled(long base, const Options& opts) {
  long n = static_cast<long>(static_cast<double>(base) * opts.scale);
  return n < 1 ? 1 : n;
}

inline void check(cudaError_t status, const char* call, const char* name) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s: %s (%s)\n", name, call, cudaGetErrorName(status),
               cudaGetErrorString(status));
  std::exit(1);
}

// Device 0, its SM count, and the context created before the timed part: start-up
// is a finding of its own in strata diagnose, not part of the planted loop.
inline int setup_device(const char* name) {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount", name);
  if (devices == 0) {
    std::fprintf(stderr, "%s: cudaGetDeviceCount: no CUDA device\n", name);
    std::exit(1);
  }
  check(cudaSetDevice(0), "cudaSetDevice", name);
  check(cudaFree(nullptr), "cudaFree", name);
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute",
        name);
  return sms;
}

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

inline void print_result(const char* name, const Options& opts, double elapsed_ms,
                         const std::string& checksum) {
  std::printf("workload=%s variant=%s elapsed_ms=%.3f checksum=%s\n", name,
              opts.fixed ? "fixed" : "planted", elapsed_ms, checksum.c_str());
}

// Deterministic inputs without a host copy (a copy would be a finding of its own):
// value i is a hash of i mapped into [0.5, 1.5).
__global__ void fill_kernel(float* out, size_t n, unsigned salt) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ salt;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    out[i] = 0.5f + static_cast<float>(h & 0xFFFFFF) / 16777216.0f;
  }
}

// The sum of the results' bit patterns, modulo 2^64: integer addition does not
// depend on the order of the atomics, so the same results give the same checksum
// in every run and both variants.
__global__ void bits_sum_kernel(const float* in, size_t n, unsigned long long* sum) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    local += __float_as_uint(in[i]);
  }
  atomicAdd(sum, local);
}

inline void fill(float* d, size_t n, unsigned salt, const char* name) {
  fill_kernel<<<1024, 256>>>(d, n, salt);
  check(cudaGetLastError(), "fill_kernel", name);
}

inline std::string checksum(const float* d, size_t n, const char* name) {
  unsigned long long* d_sum = nullptr;
  check(cudaMalloc(&d_sum, sizeof *d_sum), "cudaMalloc", name);
  check(cudaMemset(d_sum, 0, sizeof *d_sum), "cudaMemset", name);
  bits_sum_kernel<<<1024, 256>>>(d, n, d_sum);
  check(cudaGetLastError(), "bits_sum_kernel", name);
  unsigned long long sum = 0;
  check(cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost), "cudaMemcpy", name);
  check(cudaFree(d_sum), "cudaFree", name);
  char text[32];
  std::snprintf(text, sizeof text, "%016llx", sum);
  return text;
}

}  // namespace planted

#define PLANTED_CHECK(call) ::planted::check((call), #call, kName)
