// The chunks libstrata_torch.so writes (src/agent/torch, docs/torch-ops.md)
// and src/import reads: PyTorch ops recorded by a RecordFunction callback.
//
// torch-ops (kind 13, since 1.3): one thread's finished ops.
//   u32 tid, u32 clock (InstrumentClock), i64 ref_ns, u64 ref_ticks, i64 now_ns,
//   u64 now_ticks (the clock pairs of instrument-events: for kTsc, ns =
//   ref_ns + (ticks - ref_ticks) * (now_ns - ref_ns) / (now_ticks - ref_ticks);
//   for kMonotonic, what libstrata_torch writes since 2026-12-06, the stamps
//   are ns and the four fields are 0), then count =
//   (length - 40) / 48 records:
//     u64 start, u64 end            stamps on `clock`
//     u64 external_id               the op's id, unique per process; the
//                                   CUPTI external correlation id it pushed
//                                   where the agent keeps CUPTI's clock, else
//                                   the id the import links its calls to
//     i64 seq                       autograd sequence number (-1: none); links a
//                                   forward op to its backward node
//     u32 name_id                   a string of this spool's strings chunks
//     u32 shapes_id, u32 stack_id   strings too, 0 when not recorded: input
//                                   shapes as torch prints them ("[[8, 16], []]"),
//                                   the Python caller as "file(line): function"
//                                   lines joined by '\n', innermost first
//     u16 depth                     ops open around it on its thread when it began
//     u8 scope                      TorchScope
//     u8 flags                      TorchOpFlag bits
//   A string's chunk is written before the first torch-ops chunk that names it.
//
// torch-status (kind 14, since 1.3): what the capture is doing, one chunk per
//   change: u32 TorchStatus, u32 0, then a line of UTF-8 text (no NUL) such as
//   "torch 2.11.0+cu130, RecordFunction callback" or why it cannot hook.
//
// Threading: constants, and pure decoders (allocate only the result).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "format/instrument_payloads.h"
#include "format/wire_names.h"

namespace strata::format {

// torch's at::RecordScope, the scopes an op can come from. The numbers are
// torch's own (record_function.h, unchanged from 1.13 to 2.11).
enum class TorchScope : uint8_t {
  kFunction = 0,          // aten/c10 ops, autograd nodes run forward
  kBackwardFunction = 1,  // autograd nodes run by the engine (backward)
  kTorchScriptFunction = 2,
  kKernelFunctionDtype = 3,
  kCustomClass = 4,
  kBuildFeature = 5,
  kLiteInterpreter = 6,
  kUserScope = 7,  // torch.profiler.record_function / RECORD_USER_SCOPE
  kStaticRuntimeOp = 8,
  kStaticRuntimeModel = 9,
};
inline constexpr WireName kTorchScopeNames[] = {
    {0, "function"},           {1, "backward_function"},     {2, "torchscript_function"},
    {3, "kernel_function_dtype"}, {4, "custom_class"},       {5, "build_feature"},
    {6, "lite_interpreter"},   {7, "user_scope"},            {8, "static_runtime_op"},
    {9, "static_runtime_model"},
};
static_assert(wire_names_unique(kTorchScopeNames));
inline constexpr uint8_t kTorchScopeCount = 10;

enum TorchOpFlag : uint8_t {
  // The op was still open when its thread's ops were written at exit (or a
  // crash): its end is that moment, not the op's end.
  kTorchOpUnfinished = 1,
  // The op's id was pushed as CUPTI's external correlation id (since 1.3's
  // clock link: only where the agent keeps CUPTI's clock, whose timestamps
  // are not the op's CLOCK_MONOTONIC). CUPTI's rows link its calls; the
  // import must not link its process by the clock.
  kTorchOpPushed = 2,
};

enum class TorchStatus : uint32_t {
  kRecording = 1,        // ops are recorded; the text names torch and the mechanism
  kCannotHook = 2,       // this torch cannot be hooked; the text says why
  kProfilerStarted = 3,  // the program started torch's own profiler; the text says what strata did
  kNote = 4,             // anything else worth a line (e.g. no sequence numbers)
};
inline constexpr WireName kTorchStatusNames[] = {
    {1, "recording"}, {2, "cannot-hook"}, {3, "profiler-started"}, {4, "note"}};
static_assert(wire_names_unique(kTorchStatusNames));

inline constexpr size_t kTorchOpsPrefix = 40;  // the instrument-events prefix
inline constexpr size_t kTorchOpRecordSize = 48;
inline constexpr size_t kTorchStatusPrefix = 8;

namespace torch_op_offset {
inline constexpr size_t kStart = 0;        // u64
inline constexpr size_t kEnd = 8;          // u64
inline constexpr size_t kExternalId = 16;  // u64
inline constexpr size_t kSeq = 24;         // i64
inline constexpr size_t kNameId = 32;      // u32
inline constexpr size_t kShapesId = 36;    // u32
inline constexpr size_t kStackId = 40;     // u32
inline constexpr size_t kDepth = 44;       // u16
inline constexpr size_t kScope = 46;       // u8
inline constexpr size_t kFlags = 47;       // u8
}  // namespace torch_op_offset

// One op as the producer keeps it and writes it: the record's bytes, in host
// (little-endian) order, no padding.
struct TorchOpRecord {
  uint64_t start;
  uint64_t end;
  uint64_t external_id;
  int64_t seq;
  uint32_t name_id;
  uint32_t shapes_id;
  uint32_t stack_id;
  uint16_t depth;
  uint8_t scope;
  uint8_t flags;
};
static_assert(sizeof(TorchOpRecord) == kTorchOpRecordSize);
static_assert(offsetof(TorchOpRecord, external_id) == torch_op_offset::kExternalId);
static_assert(offsetof(TorchOpRecord, depth) == torch_op_offset::kDepth);
static_assert(offsetof(TorchOpRecord, flags) == torch_op_offset::kFlags);

struct TorchOps {
  uint32_t tid = 0;
  InstrumentClock clock = InstrumentClock::kMonotonic;
  int64_t ref_ns = 0;
  uint64_t ref_ticks = 0;
  int64_t now_ns = 0;
  uint64_t now_ticks = 0;
  std::vector<TorchOpRecord> ops;  // decoded; scope < kTorchScopeCount, start <= end checked
};

struct TorchStatusLine {
  TorchStatus status = TorchStatus::kNote;
  std::string text;
};

// Strict: whole records, a known clock, known scopes, start <= end. A damaged
// record fails the chunk (its CRC passed, so the producer wrote it so).
Result<TorchOps> decode_torch_ops(std::span<const std::byte> payload);
Result<TorchStatusLine> decode_torch_status(std::span<const std::byte> payload);

// Transport: the directory the spool torch-PID.bin is created in switches
// recording on; the other variables are the options (docs/torch-ops.md).
inline constexpr char kTorchDirEnv[] = "STRATA_TORCH_DIR";
inline constexpr char kTorchLibEnv[] = "STRATA_TORCH_LIB";        // path of libstrata_torch.so
inline constexpr char kTorchShapesEnv[] = "STRATA_TORCH_SHAPES";  // "1": record input shapes
inline constexpr char kTorchStackEnv[] = "STRATA_TORCH_STACK";    // N > 0: Python frames kept per op

}  // namespace strata::format
