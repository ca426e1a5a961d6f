// Every length is checked against what is left before it is used, in 64-bit
// arithmetic, so no field value can make a read go past the payload.
#include "format/sampler_payloads.h"

#include <string>

#include "format/byte_order.h"
#include "format/payload_error.h"

namespace strata::format {
Result<SamplerSamples> decode_sampler_samples(std::span<const std::byte> payload) {
  if (payload.size() < kSamplerSamplesPrefix) {
    return malformed_chunk("sampler-samples", bytes_text(payload.size()) + ", needs at least 8");
  }
  SamplerSamples out;
  const std::byte* p = payload.data();
  out.tid = load_le32(p);
  const uint32_t count = load_le32(p + 4);
  uint64_t at = kSamplerSamplesPrefix;
  const uint64_t size = payload.size();
  if (count > (size - at) / kSamplerSampleHeader) {
    return malformed_chunk("sampler-samples", std::to_string(count) + " samples cannot fit in " +
                                                  bytes_text(size - at));
  }
  out.samples.reserve(count);
  namespace off = sampler_sample_offset;
  for (uint32_t i = 0; i < count; ++i) {
    if (size - at < kSamplerSampleHeader) {
      return malformed_chunk("sampler-samples",
                             "sample " + std::to_string(i) + " runs past the end");
    }
    const std::byte* s = p + at;
    SampleView view;
    view.time = load_le64(s + off::kTime);
    view.overruns = load_le32(s + off::kOverruns);
    const uint32_t stack_size = load_le32(s + off::kStackSize);
    if (stack_size > kSamplerMaxStackBytes) {
      return malformed_chunk("sampler-samples", "sample " + std::to_string(i) + " has a stack of " +
                                                    bytes_text(stack_size) + ", more than " +
                                                    std::to_string(kSamplerMaxStackBytes));
    }
    for (int r = 0; r < kSamplerRegsPerSample; ++r) {
      view.regs[r] = load_le64(s + off::kRegs + 8 * r);
    }
    const uint64_t padded = (kSamplerSampleHeader + uint64_t{stack_size} + 7) & ~uint64_t{7};
    if (padded > size - at) {
      return malformed_chunk("sampler-samples",
                             "sample " + std::to_string(i) + "'s stack runs past the end");
    }
    view.stack = payload.subspan(at + kSamplerSampleHeader, stack_size);
    out.samples.push_back(view);
    at += padded;
  }
  if (at != size) {
    return malformed_chunk("sampler-samples", bytes_text(size - at) + " left after " +
                                                  std::to_string(count) + " samples");
  }
  return out;
}

Result<SamplerCounters> decode_sampler_counters(std::span<const std::byte> payload) {
  if (payload.size() < kSamplerCountersPrefix ||
      (payload.size() - kSamplerCountersPrefix) % 8 != 0) {
    return malformed_chunk("sampler-counters", bytes_text(payload.size()) + " is not 8 + 8n");
  }
  SamplerCounters out;
  out.hz = load_le32(payload.data());
  out.stack_bytes = load_le32(payload.data() + 4);
  const size_t slots = (payload.size() - kSamplerCountersPrefix) / 8;
  for (size_t i = 0; i < slots && i < out.totals.size(); ++i) {
    out.totals[i] = load_le64(payload.data() + kSamplerCountersPrefix + 8 * i);
  }
  return out;
}

}  // namespace strata::format
