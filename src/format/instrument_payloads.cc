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
  InstrumentEvents out;
  STRATA_TRY(decode_stamp_prefix("instrument-events", payload, out));
  out.words = payload.subspan(kInstrumentEventsPrefix);
  return out;
}

Status check_stamp_clock(const char* kind, uint32_t clock) {
  if (clock != static_cast<uint32_t>(InstrumentClock::kMonotonic) &&
      clock != static_cast<uint32_t>(InstrumentClock::kTsc)) {
    return malformed_chunk(kind, "unknown clock " + std::to_string(clock));
  }
  return Ok{};
}

}  // namespace strata::format
