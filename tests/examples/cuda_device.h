// Whether this machine has a usable CUDA device, for tests that must report
// SKIPPED rather than pass or fail where none exists (shared/DESIGN.md: GPU tests
// carry the label `gpu` and skip without a device).
//
// The driver is opened with dlopen rather than linked, so that a test binary built
// with the toolkit still starts on a machine that has no driver at all.
//
//   TEST(Foo, Bar) {
//     STRATA_SKIP_WITHOUT_CUDA_DEVICE();
//     ...
//   }
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

namespace examples_test {

// True when libcuda loads, cuInit succeeds and at least one device is present;
// otherwise false, with `why` saying which step failed.
inline bool cuda_device_present(std::string* why) {
  // Kept loaded on purpose: unloading the driver under a live context is unsafe.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* error = dlerror();
    *why = std::string("no CUDA driver: ") + (error != nullptr ? error : "libcuda.so.1");
    return false;
  }
  // CUresult is an int-sized enum; 0 is CUDA_SUCCESS.
  using CuInit = int (*)(unsigned int);
  using CuDeviceGetCount = int (*)(int*);
  auto cu_init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  auto cu_device_get_count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  if (cu_init == nullptr || cu_device_get_count == nullptr) {
    *why = "libcuda.so.1 lacks cuInit or cuDeviceGetCount";
    return false;
  }
  if (int rc = cu_init(0); rc != 0) {
    *why = "cuInit failed with CUresult " + std::to_string(rc);
    return false;
  }
  int count = 0;
  if (int rc = cu_device_get_count(&count); rc != 0 || count == 0) {
    *why = rc != 0 ? "cuDeviceGetCount failed with CUresult " + std::to_string(rc)
                   : std::string("no CUDA device");
    return false;
  }
  return true;
}

}  // namespace examples_test

#define STRATA_SKIP_WITHOUT_CUDA_DEVICE()                                  \
  do {                                                                     \
    std::string strata_no_device_reason;                                   \
    if (!::examples_test::cuda_device_present(&strata_no_device_reason)) { \
      GTEST_SKIP() << strata_no_device_reason;                             \
    }                                                                      \
  } while (false)
