#include "format/torch_payloads.h"

#include <string>

#include "format/byte_order.h"
#include "format/payload_error.h"

namespace strata::format {

Result<TorchOps> decode_torch_ops(std::span<const std::byte> payload) {
  if (payload.size() < kTorchOpsPrefix ||
      (payload.size() - kTorchOpsPrefix) % kTorchOpRecordSize != 0) {
    return malformed_chunk("torch-ops", bytes_text(payload.size()) + " is not 40 + 48n");
  }
  TorchOps out;
  STRATA_TRY(decode_stamp_prefix("torch-ops", payload, out));
  const size_t count = (payload.size() - kTorchOpsPrefix) / kTorchOpRecordSize;
  out.ops.reserve(count);
  namespace rec = torch_op_offset;
  for (size_t i = 0; i < count; ++i) {
    const std::byte* r = payload.data() + kTorchOpsPrefix + i * kTorchOpRecordSize;
    TorchOpRecord op{};
    op.start = load_le64(r + rec::kStart);
    op.end = load_le64(r + rec::kEnd);
    op.external_id = load_le64(r + rec::kExternalId);
    op.seq = static_cast<int64_t>(load_le64(r + rec::kSeq));
    op.name_id = load_le32(r + rec::kNameId);
    op.shapes_id = load_le32(r + rec::kShapesId);
    op.stack_id = load_le32(r + rec::kStackId);
    op.depth = load_le16(r + rec::kDepth);
    op.scope = static_cast<uint8_t>(r[rec::kScope]);
    op.flags = static_cast<uint8_t>(r[rec::kFlags]);
    if (op.scope >= kTorchScopeCount) {
      return malformed_chunk("torch-ops", "op " + std::to_string(i) + " has unknown scope " +
                                              std::to_string(op.scope));
    }
    if (op.end < op.start) {
      return malformed_chunk("torch-ops", "op " + std::to_string(i) + " ends before it starts");
    }
    out.ops.push_back(op);
  }
  return out;
}

Result<TorchStatusLine> decode_torch_status(std::span<const std::byte> payload) {
  if (payload.size() < kTorchStatusPrefix) {
    return malformed_chunk("torch-status", bytes_text(payload.size()) + " is shorter than 8");
  }
  const uint32_t status = load_le32(payload.data());
  if (status < static_cast<uint32_t>(TorchStatus::kRecording) ||
      status > static_cast<uint32_t>(TorchStatus::kNote)) {
    return malformed_chunk("torch-status", "unknown status " + std::to_string(status));
  }
  TorchStatusLine out;
  out.status = static_cast<TorchStatus>(status);
  auto text = payload.subspan(kTorchStatusPrefix);
  out.text.assign(reinterpret_cast<const char*>(text.data()), text.size());
  return out;
}

}  // namespace strata::format
