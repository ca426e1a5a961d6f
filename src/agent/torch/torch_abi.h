// The few pieces of libtorch's ABI libstrata_torch.so relies on, declared
// here instead of taken from torch's headers (strata builds without torch):
// RecordFunctionCallback's layout (aten/src/ATen/record_function.h, the same
// 40 bytes from 1.13 to 2.11) and the mangled names of the exported functions
// it looks up with dlsym in the libtorch_cpu.so the program loaded.
// RecordFunction itself stays opaque: its name comes from an exported member
// function, its sequence number from an offset probed at run time
// (torch_recorder.cc, calibration).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace at {

struct RecordFunction;  // opaque

struct ObserverContext {
  virtual ~ObserverContext() = default;
};

// RecordScope::NUM_SCOPES, unchanged from 1.13 to 2.11.
inline constexpr int kNumScopes = 10;

class RecordFunctionCallback {
 public:
  using StartCallback = std::unique_ptr<ObserverContext> (*)(const RecordFunction&);
  using EndCallback = void (*)(const RecordFunction&, ObserverContext*);
  StartCallback start_ = nullptr;
  EndCallback end_ = nullptr;
  double sampling_prob_ = 1.0;
  bool scopes_[kNumScopes] = {};
  bool needs_inputs_ = false;
  bool needs_outputs_ = false;
  bool needs_ids_ = false;
};
static_assert(sizeof(RecordFunctionCallback) == 40, "torch 1.13 .. 2.11 layout");

}  // namespace at

namespace strata::agent::torch {

// Passed by value in registers' stead through memory: trivially copyable, so
// the by-value call below matches libtorch's.
using AddGlobalCallbackFn = uint64_t (*)(at::RecordFunctionCallback);
using RemoveCallbackFn = void (*)(uint64_t);
using NameFn = const char* (*)(const at::RecordFunction*);
using PeekSequenceFn = int64_t (*)();
using InputSizesFn = std::vector<std::vector<int64_t>> (*)(const at::RecordFunction&, bool);

inline constexpr char kAddGlobalCallback[] = "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE";
inline constexpr char kRemoveCallback[] = "_ZN2at14removeCallbackEm";
inline constexpr char kRecordFunctionName[] = "_ZNK2at14RecordFunction4nameEv";
inline constexpr char kPeekSequence[] = "_ZN2at15sequence_number4peekEv";
inline constexpr char kInputSizes[] = "_ZN5torch8profiler4impl10inputSizesERKN2at14RecordFunctionEb";

}  // namespace strata::agent::torch
