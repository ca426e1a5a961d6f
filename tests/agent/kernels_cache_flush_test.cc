// CacheFlush (src/agent/kernels/cache_flush.h) against a fake driver: what it
// allocates, which kernels it loads from which PTX, what it launches where
// and in which order, and which allocations it finds behind a kernel's
// arguments. The
// flush's effect on a GPU is measured by bench/kernels_vs_ncu.py
// (docs/PERFORMANCE.md, "Cache control").
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "agent/kernels/cache_flush.h"

namespace {

using strata::agent::kernels::CacheFlush;
using strata::agent::kernels::DriverApi;

constexpr int kL2Bytes = 50 << 20;
constexpr int kSms = 132;
// The fake's handle of each function set_up asks for.
const CUfunction kL2Sweep = reinterpret_cast<CUfunction>(0x101);
const CUfunction kTouch = reinterpret_cast<CUfunction>(0x102);
const CUfunction kDiscard = reinterpret_cast<CUfunction>(0x103);
const CUfunction kInstructionSweep = reinterpret_cast<CUfunction>(0x104);

struct FakeLaunch {
  CUfunction function;
  unsigned grid, block;
  CUstream stream;
  std::vector<uint64_t> args;  // each argument's first 8 bytes
};
struct FakeAllocation {
  CUdeviceptr base;
  size_t bytes;
};

// The fake driver's state, reset by the fixture.
struct FakeDriver {
  std::vector<size_t> allocations;
  CUdeviceptr next_address = 0x7000'0000;
  bool fail_alloc = false;
  std::vector<std::string> images;   // in load order
  std::vector<unsigned> jit_levels;  // CU_JIT_OPTIMIZATION_LEVEL of each cuModuleLoadDataEx
  bool fail_load_ex = false;
  bool no_discard = false;  // as a GPU older than sm_80
  std::vector<std::string> functions;
  std::vector<FakeLaunch> launches;
  std::vector<unsigned char> copied;
  std::vector<FakeAllocation> memory;  // what cuMemGetAddressRange knows
  std::vector<size_t> param_sizes;     // the profiled kernel's parameter list
  bool function_info_fails = false;    // as for a CUkernel handle
} g;

CUresult get_attribute(int* value, CUdevice_attribute attribute, CUdevice) {
  if (attribute == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) *value = kL2Bytes;
  if (attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) *value = kSms;
  return CUDA_SUCCESS;
}
CUresult mem_alloc(CUdeviceptr* ptr, size_t bytes) {
  if (g.fail_alloc) return CUDA_ERROR_OUT_OF_MEMORY;
  g.allocations.push_back(bytes);
  *ptr = g.next_address;
  g.next_address += bytes;
  return CUDA_SUCCESS;
}
CUresult mem_set(CUdeviceptr, unsigned char, size_t) {
  return CUDA_SUCCESS;
}
CUresult module_load(CUmodule* module, const void* image) {
  const char* text = static_cast<const char*>(image);
  if (g.no_discard && std::strstr(text, ".target sm_80") != nullptr) return CUDA_ERROR_INVALID_PTX;
  g.images.push_back(text);
  *module = reinterpret_cast<CUmodule>(0x10);
  return CUDA_SUCCESS;
}
CUresult module_load_ex(CUmodule* module, const void* image, unsigned count, CUjit_option* options,
                        void** values) {
  if (g.fail_load_ex) return CUDA_ERROR_INVALID_PTX;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == CU_JIT_OPTIMIZATION_LEVEL) {
      g.jit_levels.push_back(static_cast<unsigned>(reinterpret_cast<uintptr_t>(values[i])));
    }
  }
  return module_load(module, image);
}
CUresult get_function(CUfunction* function, CUmodule, const char* name) {
  g.functions.push_back(name);
  const std::string n = name;
  *function = n == "strata_l2_sweep"            ? kL2Sweep
              : n == "strata_touch_pages"       ? kTouch
              : n == "strata_l2_discard"        ? kDiscard
              : n == "strata_instruction_sweep" ? kInstructionSweep
                                                : reinterpret_cast<CUfunction>(0x1ff);
  return CUDA_SUCCESS;
}
CUresult launch(CUfunction f, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned,
                unsigned, CUstream stream, void** args, void**) {
  FakeLaunch l{f, gx, bx, stream, {}};
  // The L2 sweep takes 3 arguments, the touch and the discard 2, the
  // instruction sweep 1; each is 8 bytes.
  const size_t count = f == kL2Sweep ? 3 : f == kInstructionSweep ? 1 : 2;
  for (size_t i = 0; i < count; ++i) {
    uint64_t value = 0;
    std::memcpy(&value, args[i], sizeof(value));
    l.args.push_back(value);
  }
  g.launches.push_back(l);
  return CUDA_SUCCESS;
}
CUresult copy_to_device(CUdeviceptr, const void* src, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(src);
  g.copied.assign(p, p + bytes);
  return CUDA_SUCCESS;
}
CUresult address_range(CUdeviceptr* base, size_t* bytes, CUdeviceptr ptr) {
  for (const FakeAllocation& a : g.memory) {
    if (ptr >= a.base && ptr < a.base + a.bytes) {
      *base = a.base;
      *bytes = a.bytes;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}
CUresult param_info_of(size_t index, size_t* offset, size_t* size) {
  if (index >= g.param_sizes.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = 8 * index;
  *size = g.param_sizes[index];
  return CUDA_SUCCESS;
}
CUresult function_param_info(CUfunction, size_t index, size_t* offset, size_t* size) {
  if (g.function_info_fails) return CUDA_ERROR_INVALID_HANDLE;
  return param_info_of(index, offset, size);
}
CUresult kernel_param_info(CUkernel, size_t index, size_t* offset, size_t* size) {
  return param_info_of(index, offset, size);
}

class KernelsCacheFlush : public ::testing::Test {
 protected:
  void SetUp() override {
    g = FakeDriver{};
    api.cuDeviceGetAttribute = get_attribute;
    api.cuMemAlloc = mem_alloc;
    api.cuMemsetD8 = mem_set;
    api.cuModuleLoadData = module_load;
    api.cuModuleLoadDataEx = module_load_ex;
    api.cuModuleGetFunction = get_function;
    api.cuLaunchKernel = launch;
    api.cuMemcpyHtoD = copy_to_device;
    api.cuMemGetAddressRange = address_range;
    api.cuFuncGetParamInfo = function_param_info;
    api.cuKernelGetParamInfo = kernel_param_info;
  }
  DriverApi api;
  CacheFlush flush;
  const CUstream stream = reinterpret_cast<CUstream>(0x5000);
  const CUfunction kernel = reinterpret_cast<CUfunction>(0x9000);
};

TEST_F(KernelsCacheFlush, PreparesTwiceTheL2AndTheThreeKernels) {
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  ASSERT_GE(g.allocations.size(), 1u);
  EXPECT_EQ(g.allocations[0], 2u * kL2Bytes);
  EXPECT_EQ(flush.buffer_bytes(), 2u * kL2Bytes);
  ASSERT_EQ(g.images.size(), 3u);
  EXPECT_NE(g.images[0].find(".entry strata_l2_sweep("), std::string::npos);
  EXPECT_NE(g.images[0].find(".entry strata_touch_pages("), std::string::npos);
  EXPECT_NE(g.images[0].find(".target sm_75"), std::string::npos);
  // The discard: its own module, for sm_80 where discard.global.L2 begins.
  EXPECT_NE(g.images[1].find(".entry strata_l2_discard("), std::string::npos);
  EXPECT_NE(g.images[1].find(".target sm_80"), std::string::npos);
  EXPECT_NE(g.images[1].find("discard.global.L2"), std::string::npos);
  EXPECT_TRUE(flush.discards());
  // The instruction sweep: its own module, compiled at the JIT's level 0.
  EXPECT_NE(g.images[2].find(".entry strata_instruction_sweep("), std::string::npos);
  EXPECT_EQ(g.jit_levels, (std::vector<unsigned>{0}));
  EXPECT_TRUE(flush.sweeps_instructions());
  EXPECT_EQ(g.functions,
            (std::vector<std::string>{"strata_l2_sweep", "strata_touch_pages", "strata_l2_discard",
                                      "strata_instruction_sweep"}));
  // Set up once per context.
  const size_t allocations = g.allocations.size();
  EXPECT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  EXPECT_EQ(g.allocations.size(), allocations);
}

TEST_F(KernelsCacheFlush, SweepsInstructionsThenTheWholeBufferOnTheLaunchStream) {
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, nullptr), 0u);  // no argument array
  ASSERT_EQ(flush.enqueue(api, stream), CUDA_SUCCESS);
  ASSERT_EQ(g.launches.size(), 3u);  // no touch without ranges
  const FakeLaunch& instructions = g.launches[0];
  EXPECT_EQ(instructions.function, kInstructionSweep);
  EXPECT_EQ(instructions.stream, stream);
  EXPECT_EQ(instructions.grid, 2u * kSms);  // every SM, whatever the placement
  EXPECT_EQ(instructions.block, 128u);      // a warp per SM sub-partition
  const FakeLaunch& sweep = g.launches[1];
  EXPECT_EQ(sweep.function, kL2Sweep);
  EXPECT_EQ(sweep.stream, stream);
  EXPECT_EQ(sweep.grid, 4u * kSms);
  EXPECT_EQ(sweep.block, 512u);
  EXPECT_EQ(sweep.args[1], 2u * kL2Bytes / 16);  // 16-byte words
  const FakeLaunch& discard = g.launches[2];
  EXPECT_EQ(discard.function, kDiscard);
  EXPECT_EQ(discard.stream, stream);
  EXPECT_EQ(discard.args[0], sweep.args[0]);  // the sweep's buffer, all of it
  EXPECT_EQ(discard.args[1], 2u * kL2Bytes);
}

TEST_F(KernelsCacheFlush, AGpuWithoutDiscardIsStillSwept) {
  g.no_discard = true;
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  EXPECT_FALSE(flush.discards());
  ASSERT_EQ(flush.enqueue(api, stream), CUDA_SUCCESS);
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_EQ(g.launches[0].function, kInstructionSweep);
  EXPECT_EQ(g.launches[1].function, kL2Sweep);
}

TEST_F(KernelsCacheFlush, TouchesTheDistinctAllocationsBehindPointerArguments) {
  g.memory = {{0x2000'0000, 64 << 20}, {0x3000'0000, 4 << 20}};
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  // (int, float*, double, float*, float* into the first again, size_t
  // that is no address)
  int count = 7;
  CUdeviceptr a = 0x2000'0000 + 100, b = 0x3000'0000, a_again = 0x2000'0000 + 4096;
  double scale = 2.0;
  uint64_t not_an_address = 12345;
  void* args[] = {&count, &a, &scale, &b, &a_again, &not_an_address};
  g.param_sizes = {4, 8, 8, 8, 8, 8};
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, args), 2u);
  ASSERT_EQ(g.copied.size(), 2u * 16);
  uint64_t ranges[4];
  std::memcpy(ranges, g.copied.data(), sizeof(ranges));
  EXPECT_EQ(ranges[0], 0x2000'0000u);
  EXPECT_EQ(ranges[1], uint64_t{64} << 20);
  EXPECT_EQ(ranges[2], 0x3000'0000u);
  EXPECT_EQ(ranges[3], uint64_t{4} << 20);

  ASSERT_EQ(flush.enqueue(api, stream), CUDA_SUCCESS);
  ASSERT_EQ(g.launches.size(), 4u);
  const FakeLaunch& touch = g.launches[3];  // last, after the sweeps and the discard
  EXPECT_EQ(touch.function, kTouch);
  EXPECT_EQ(touch.grid, 2u);  // one block per range
  EXPECT_EQ(touch.stream, stream);
}

TEST_F(KernelsCacheFlush, TouchesTheAllocationsBehindPointerMembersOfAStructArgument) {
  g.memory = {{0x2000'0000, 1 << 20}, {0x3000'0000, 2 << 20}};
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  // As cuBLAS passes its matrices: one struct holding sizes and pointers.
  struct GemmParams {
    int m, n;
    CUdeviceptr a;
    double alpha;
    CUdeviceptr b;
    CUdeviceptr a_again;
  } params{64, 64, 0x2000'0000 + 256, 1.0, 0x3000'0000 + 8, 0x2000'0000};
  void* args[] = {&params};
  g.param_sizes = {sizeof(params)};
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, args), 2u);
  uint64_t ranges[4];
  ASSERT_EQ(g.copied.size(), sizeof(ranges));
  std::memcpy(ranges, g.copied.data(), sizeof(ranges));
  EXPECT_EQ(ranges[0], 0x2000'0000u);
  EXPECT_EQ(ranges[2], 0x3000'0000u);
}

TEST_F(KernelsCacheFlush, LooksUpAtMostFiveHundredTwelveArgumentWords) {
  g.memory = {{0x2000'0000, 1 << 20}};
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  // 512 nonzero words that are no address, then a pointer: not looked up.
  std::vector<uint64_t> big(513, 7);
  big[512] = 0x2000'0000;
  void* args[] = {big.data()};
  g.param_sizes = {big.size() * sizeof(uint64_t)};
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, args), 0u);
  big[511] = 0x2000'0000;  // the 512th is
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, args), 1u);
}

TEST_F(KernelsCacheFlush, AsksTheKernelHandleWhenTheFunctionDoesNotAnswer) {
  g.memory = {{0x2000'0000, 1 << 20}};
  g.function_info_fails = true;
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  CUdeviceptr a = 0x2000'0000;
  void* args[] = {&a};
  g.param_sizes = {8};
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, args), 1u);
  api.cuKernelGetParamInfo = nullptr;
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, args), 0u);
}

TEST_F(KernelsCacheFlush, KeepsAtMostThirtyTwoRanges) {
  std::vector<CUdeviceptr> pointers;
  for (int i = 0; i < 40; ++i) {
    CUdeviceptr base = 0x1'0000'0000ull + uint64_t(i) * (1 << 20);
    g.memory.push_back({base, 1 << 20});
    pointers.push_back(base);
  }
  std::vector<void*> args;
  for (CUdeviceptr& p : pointers) args.push_back(&p);
  g.param_sizes.assign(40, 8);
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  EXPECT_EQ(flush.find_touch_ranges(api, kernel, args.data()), 32u);
  EXPECT_EQ(g.copied.size(), 32u * 16);
}

TEST_F(KernelsCacheFlush, WithoutTheInstructionSweepTheL2SweepStillRuns) {
  g.fail_load_ex = true;  // as a driver whose JIT refuses the module
  ASSERT_EQ(flush.prepare(api, 0), CUDA_SUCCESS);
  EXPECT_FALSE(flush.sweeps_instructions());
  ASSERT_EQ(flush.enqueue(api, stream), CUDA_SUCCESS);
  ASSERT_EQ(g.launches.size(), 2u);
  EXPECT_EQ(g.launches[0].function, kL2Sweep);
  EXPECT_EQ(g.launches[1].function, kDiscard);
}

TEST_F(KernelsCacheFlush, AFailedSetUpIsKeptAndLaunchesNothing) {
  g.fail_alloc = true;
  EXPECT_EQ(flush.prepare(api, 0), CUDA_ERROR_OUT_OF_MEMORY);
  g.fail_alloc = false;
  EXPECT_EQ(flush.prepare(api, 0), CUDA_ERROR_OUT_OF_MEMORY);  // not retried
  EXPECT_NE(flush.enqueue(api, stream), CUDA_SUCCESS);
  EXPECT_TRUE(g.launches.empty());
}

}  // namespace
