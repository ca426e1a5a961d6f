// The one shape of a decoder's error ("malformed KIND chunk: WHAT"), shared
// by the payload decoders of src/format (payloads.cc, instrument_payloads.cc,
// sampler_payloads.cc). Internal to src/format.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace strata::format {

inline Error malformed_chunk(const char* kind, const std::string& what) {
  return make_error(std::string("malformed ") + kind + " chunk: " + what);
}

// "N bytes", for those messages.
inline std::string bytes_text(uint64_t n) {
  return std::to_string(n) + " bytes";
}

}  // namespace strata::format
