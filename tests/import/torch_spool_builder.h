// Payloads of the torch chunks (format/torch_payloads.h) laid out byte by
// byte as libstrata_torch writes them, for the format and import tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "format/byte_order.h"
#include "format/torch_payloads.h"

namespace strata::test_util {

struct TorchOpsPrefix {
  uint32_t tid = 1;
  format::InstrumentClock clock = format::InstrumentClock::kMonotonic;
  int64_t ref_ns = 0;
  uint64_t ref_ticks = 0;
  int64_t now_ns = 0;
  uint64_t now_ticks = 0;
};

inline std::vector<std::byte> torch_ops_payload(const TorchOpsPrefix& prefix,
                                                const std::vector<format::TorchOpRecord>& ops) {
  namespace off = format::instrument_events_offset;
  namespace rec = format::torch_op_offset;
  std::vector<std::byte> b(format::kTorchOpsPrefix + format::kTorchOpRecordSize * ops.size());
  format::store_le32(b.data() + off::kTid, prefix.tid);
  format::store_le32(b.data() + off::kClock, static_cast<uint32_t>(prefix.clock));
  format::store_le64(b.data() + off::kRefNs, static_cast<uint64_t>(prefix.ref_ns));
  format::store_le64(b.data() + off::kRefTicks, prefix.ref_ticks);
  format::store_le64(b.data() + off::kNowNs, static_cast<uint64_t>(prefix.now_ns));
  format::store_le64(b.data() + off::kNowTicks, prefix.now_ticks);
  for (size_t i = 0; i < ops.size(); ++i) {
    std::byte* r = b.data() + format::kTorchOpsPrefix + i * format::kTorchOpRecordSize;
    const auto& op = ops[i];
    format::store_le64(r + rec::kStart, op.start);
    format::store_le64(r + rec::kEnd, op.end);
    format::store_le64(r + rec::kExternalId, op.external_id);
    format::store_le64(r + rec::kSeq, static_cast<uint64_t>(op.seq));
    format::store_le32(r + rec::kNameId, op.name_id);
    format::store_le32(r + rec::kShapesId, op.shapes_id);
    format::store_le32(r + rec::kStackId, op.stack_id);
    format::store_le16(r + rec::kDepth, op.depth);
    r[rec::kScope] = static_cast<std::byte>(op.scope);
    r[rec::kFlags] = static_cast<std::byte>(op.flags);
  }
  return b;
}

inline std::vector<std::byte> torch_status_payload(uint32_t status, const std::string& text) {
  std::vector<std::byte> b(format::kTorchStatusPrefix + text.size());
  format::store_le32(b.data(), status);
  format::store_le32(b.data() + 4, 0);
  std::memcpy(b.data() + format::kTorchStatusPrefix, text.data(), text.size());
  return b;
}

inline format::TorchOpRecord torch_op(uint64_t start, uint64_t end, uint32_t name_id,
                                      uint64_t external_id = 0, int64_t seq = -1) {
  format::TorchOpRecord r{};
  r.start = start;
  r.end = end;
  r.external_id = external_id;
  r.seq = seq;
  r.name_id = name_id;
  return r;
}

}  // namespace strata::test_util
