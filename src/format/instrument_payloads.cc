#include "format/instrument_payloads.h"

#include <string>

#include "format/byte_order.h"
#include "format/payload_error.h"

namespace strata::format {

Result<InstrumentEvents> decode_instrument_events(std::span<const std::byte> payload) {
  if (payload.size() < kInstrumentEventsPrefix ||
      (payload.size() - kInstrumentEventsPrefix) % kInstrumentWordSize != 0) {
    return malformed_chunk("instrument-events", bytes_text(payload.size()) + " is not 40 + 8n");
  }
  namespace off = instrument_events_offset;
  const std::byte* p = payload.data();
  InstrumentEvents out;
  const uint32_t clock = load_le32(p + off::kClock);
  if (clock != static_cast<uint32_t>(InstrumentClock::kMonotonic) &&
      clock != static_cast<uint32_t>(InstrumentClock::kTsc)) {
    return malformed_chunk("instrument-events", "unknown clock " + std::to_string(clock));
  }
  out.tid = load_le32(p + off::kTid);
  out.clock = static_cast<InstrumentClock>(clock);
  out.ref_ns = static_cast<int64_t>(load_le64(p + off::kRefNs));
  out.ref_ticks = load_le64(p + off::kRefTicks);
  out.now_ns = static_cast<int64_t>(load_le64(p + off::kNowNs));
  out.now_ticks = load_le64(p + off::kNowTicks);
  out.words = payload.subspan(kInstrumentEventsPrefix);
  return out;
}

}  // namespace strata::format
