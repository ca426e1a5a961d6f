// The one chunk loop of strata: every spool any producer writes (the CUDA
// agent, strata::instrument, the in-process sampler, libstrata_torch) is read by
// visit_chunks, which takes each chunk src/format's SpoolReader hands out
// (framing, CRC, damage counting), decodes it with src/format's decoder for
// its kind and hands the result to a ChunkVisitor. The readers of src/import
// (CUPTI -> trace database, instrument spools -> profile, in-process samples
// -> RawProfile) are visitors; a new chunk kind is one decoder in src/format,
// one on_ method here and one case in chunk_visitor.cc.
//
// Contract: chunks arrive in file order; only kinds the visitor wants() are
// decoded (the others are passed over unread, so a consumer never pays for
// or counts chunks it ignores). Views in the decoded values point into the
// chunk's payload and live as long as SpoolReader::next keeps it (see
// format::Chunk::in_file). A handler's error stops the loop and is returned;
// a payload that does not decode goes to on_malformed and the loop goes on.
// Threading: one thread per reader and visitor.
#pragma once

#include <vector>

#include "common/result.h"
#include "format/instrument_payloads.h"
#include "format/payloads.h"
#include "format/sampler_payloads.h"
#include "format/spool_reader.h"
#include "format/torch_payloads.h"

namespace strata::import {

class ChunkVisitor {
 public:
  virtual ~ChunkVisitor() = default;

  // The kinds this visitor reads.
  virtual bool wants(format::ChunkKind kind) const = 0;

  virtual Status on_cupti_buffer(const format::Chunk&, const format::CuptiBuffer&) { return Ok{}; }
  virtual Status on_strings(const std::vector<format::StringEntry>&) { return Ok{}; }
  virtual Status on_drop_counters(const std::vector<format::DropCounter>&) { return Ok{}; }
  virtual Status on_thread_name(const format::ThreadName&) { return Ok{}; }
  virtual Status on_process_info(const format::ProcessInfo&) { return Ok{}; }
  virtual Status on_kernel_metrics(const format::KernelMetrics&) { return Ok{}; }
  virtual Status on_kernels_seen(const std::vector<format::KernelSeen>&) { return Ok{}; }
  virtual Status on_instrument_events(const format::InstrumentEvents&) { return Ok{}; }
  virtual Status on_memory_map(const format::MemoryMap&) { return Ok{}; }
  virtual Status on_sampler_samples(const format::SamplerSamples&) { return Ok{}; }
  virtual Status on_sampler_counters(const format::SamplerCounters&) { return Ok{}; }
  virtual Status on_torch_ops(const format::TorchOps&) { return Ok{}; }
  virtual Status on_torch_status(const format::TorchStatusLine&) { return Ok{}; }
  // A wanted chunk whose CRC held but whose payload sizes do not add up.
  virtual void on_malformed(const format::Chunk&, const Error&) {}
};

// Reads the rest of `reader`'s chunks into `visitor`. The end-of-stream
// chunk is consumed by the reader itself: its contents are in
// reader.stats().end once this returns. Errors: the first a handler returned.
Status visit_chunks(format::SpoolReader& reader, ChunkVisitor& visitor);

}  // namespace strata::import
