// What a GPU activity is, by its name alone: NCCL's kernels are
// communication (with the collective they run), memcpy/memset are memory,
// everything else is compute. Pure.
//
// NCCL names its kernels ncclDevKernel_<Collective>_<Op>_<type>_<algo>_<proto>
// since 2.19 (ncclDevKernel_AllReduce_Sum_f32_RING_LL,
// ncclDevKernel_SendRecv, ncclDevKernel_Generic for fused groups),
// ncclKernel_<Collective>_<algo>_<proto>_<Op>_<type> in 2.12-2.18, and
// nccl<Collective><Algo><Proto>Kernel_<op>_<type> before; all three parse.
#pragma once

#include <string_view>

namespace strata::analysis {

enum class KernelClass { kCompute, kCommunication, kMemory };

enum class Collective {
  kNone,  // not a communication kernel
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kSendRecv,  // also Send and Recv alone
  kAllToAll,
  kOther,  // an NCCL kernel whose collective the name does not say (ncclDevKernel_Generic)
};

struct KernelKind {
  KernelClass cls = KernelClass::kCompute;
  Collective collective = Collective::kNone;
};

// `name` may be demangled (with "void " and a parameter list), short or
// mangled (_Z...).
KernelKind classify_kernel(std::string_view name);

// "compute", "communication", "memory".
std::string_view kernel_class_name(KernelClass cls);
// NCCL's spelling: "AllReduce", "AllGather", "ReduceScatter", "Broadcast",
// "Reduce", "SendRecv", "AllToAll", "Other"; "" for kNone.
std::string_view collective_name(Collective collective);

}  // namespace strata::analysis
