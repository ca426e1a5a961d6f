#include "import/chunk_visitor.h"

namespace strata::import {
namespace {

// Decodes with `decode` and hands the value to `handle`, or the error to
// on_malformed.
template <class Decode, class Handle>
Status deliver(const format::Chunk& chunk, ChunkVisitor& visitor, Decode decode, Handle handle) {
  auto decoded = decode(chunk.payload);
  if (!decoded) {
    visitor.on_malformed(chunk, decoded.error());
    return Ok{};
  }
  return handle(*decoded);
}

Status dispatch(const format::Chunk& chunk, ChunkVisitor& v) {
  using format::ChunkKind;
  switch (chunk.kind) {
    case ChunkKind::kCuptiBuffer:
      return deliver(chunk, v, format::decode_cupti_buffer,
                     [&](const format::CuptiBuffer& b) { return v.on_cupti_buffer(chunk, b); });
    case ChunkKind::kStrings:
      return deliver(chunk, v, format::decode_strings,
                     [&](const auto& s) { return v.on_strings(s); });
    case ChunkKind::kDropCounters:
      return deliver(chunk, v, format::decode_drop_counters,
                     [&](const auto& d) { return v.on_drop_counters(d); });
    case ChunkKind::kThreadName:
      return deliver(chunk, v, format::decode_thread_name,
                     [&](const auto& t) { return v.on_thread_name(t); });
    case ChunkKind::kProcessInfo:
      return deliver(chunk, v, format::decode_process_info,
                     [&](const auto& p) { return v.on_process_info(p); });
    case ChunkKind::kEndOfStream:
      return Ok{};  // SpoolReader consumes it (stats().end); never handed out
    case ChunkKind::kKernelMetrics:
      return deliver(chunk, v, format::decode_kernel_metrics,
                     [&](const auto& k) { return v.on_kernel_metrics(k); });
    case ChunkKind::kKernelsSeen:
      return deliver(chunk, v, format::decode_kernels_seen,
                     [&](const auto& k) { return v.on_kernels_seen(k); });
    case ChunkKind::kInstrumentEvents:
      return deliver(chunk, v, format::decode_instrument_events,
                     [&](const auto& e) { return v.on_instrument_events(e); });
    case ChunkKind::kMemoryMap:
      return deliver(chunk, v, format::decode_memory_map,
                     [&](const auto& m) { return v.on_memory_map(m); });
    case ChunkKind::kSamplerSamples:
      return deliver(chunk, v, format::decode_sampler_samples,
                     [&](const auto& s) { return v.on_sampler_samples(s); });
    case ChunkKind::kSamplerCounters:
      return deliver(chunk, v, format::decode_sampler_counters,
                     [&](const auto& c) { return v.on_sampler_counters(c); });
    case ChunkKind::kTorchOps:
      return deliver(chunk, v, format::decode_torch_ops,
                     [&](const auto& t) { return v.on_torch_ops(t); });
    case ChunkKind::kTorchStatus:
      return deliver(chunk, v, format::decode_torch_status,
                     [&](const auto& t) { return v.on_torch_status(t); });
  }
  return Ok{};
}

}  // namespace

Status visit_chunks(format::SpoolReader& reader, ChunkVisitor& visitor) {
  format::Chunk chunk;
  while (reader.next(&chunk)) {
    if (!visitor.wants(chunk.kind)) continue;
    STRATA_TRY(dispatch(chunk, visitor));
  }
  return Ok{};
}

}  // namespace strata::import
