#include "analysis/kernel_class.h"

#include <gtest/gtest.h>

namespace strata::analysis {
namespace {

void expect_nccl(const char* name, Collective want) {
  KernelKind k = classify_kernel(name);
  EXPECT_EQ(k.cls, KernelClass::kCommunication) << name;
  EXPECT_EQ(k.collective, want) << name << " gave " << collective_name(k.collective);
}

TEST(KernelClass, NcclDevKernelNames) {
  expect_nccl("ncclDevKernel_AllReduce_Sum_f32_RING_LL", Collective::kAllReduce);
  expect_nccl("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
              Collective::kAllReduce);
  expect_nccl("ncclDevKernel_AllReduce_Sum_bf16_NVLS_SIMPLE", Collective::kAllReduce);
  expect_nccl("ncclDevKernel_AllGather_RING_LL", Collective::kAllGather);
  expect_nccl("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", Collective::kReduceScatter);
  expect_nccl("ncclDevKernel_Broadcast_RING_LL", Collective::kBroadcast);
  expect_nccl("ncclDevKernel_Reduce_Sum_f32_RING_LL", Collective::kReduce);
  expect_nccl("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", Collective::kSendRecv);
  expect_nccl("ncclDevKernel_Generic_4", Collective::kOther);
}

TEST(KernelClass, OlderNcclNames) {
  expect_nccl("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", Collective::kAllReduce);
  expect_nccl("void ncclKernel_ReduceScatter_RING_LL_Sum_half(ncclDevComm*, ncclWork*)",
              Collective::kReduceScatter);
  expect_nccl("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", Collective::kSendRecv);
  expect_nccl("ncclAllReduceRingLLKernel_sum_f32(ncclColl)", Collective::kAllReduce);
  expect_nccl("ncclBroadcastRingLLKernel_copy_i8(ncclColl)", Collective::kBroadcast);
}

TEST(KernelClass, MangledNcclName) {
  expect_nccl("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
              Collective::kAllReduce);
}

TEST(KernelClass, MemoryAndCompute) {
  EXPECT_EQ(classify_kernel("[CUDA memcpy Host-to-Device]").cls, KernelClass::kMemory);
  EXPECT_EQ(classify_kernel("[CUDA memset]").cls, KernelClass::kMemory);
  EXPECT_EQ(classify_kernel("void cuMemsetD32_kernel(int*, int)").cls, KernelClass::kMemory);
  EXPECT_EQ(classify_kernel("my_memcpy_kernel").cls, KernelClass::kMemory);
  KernelKind gemm = classify_kernel("void gemm_kernel<float>(float const*, float*)");
  EXPECT_EQ(gemm.cls, KernelClass::kCompute);
  EXPECT_EQ(gemm.collective, Collective::kNone);
  EXPECT_EQ(classify_kernel("").cls, KernelClass::kCompute);
  // "nccl" alone, or in a parameter list, is not NCCL's kernel.
  EXPECT_EQ(classify_kernel("ncclient_step").cls, KernelClass::kCompute);
  EXPECT_EQ(classify_kernel("void pack(ncclDevKernel_AllReduce*)").cls, KernelClass::kCompute);
}

TEST(KernelClass, Names) {
  EXPECT_EQ(kernel_class_name(KernelClass::kCommunication), "communication");
  EXPECT_EQ(collective_name(Collective::kReduceScatter), "ReduceScatter");
  EXPECT_EQ(collective_name(Collective::kNone), "");
}

}  // namespace
}  // namespace strata::analysis
