// The perf-map parser (src/symbolize/perf_map) on arbitrary text: it must
// never crash, every entry it keeps must be a non-empty range that does not
// wrap, and find() must agree with the file's rule (the last line covering an
// address wins), checked against a brute-force scan at every entry's edges,
// where the overlap splitting can go wrong. A broken promise aborts, which
// libFuzzer and the replay test report as a crash.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "symbolize/perf_map.h"

namespace {

using strata::symbolize::PerfMap;
using strata::symbolize::PerfMapEntry;

void expect(bool ok) {
  if (!ok) std::abort();
}

bool covers(const PerfMapEntry& e, uint64_t addr) {
  return addr >= e.start && addr - e.start < e.size;
}

// The last entry covering addr, by scanning them all.
const PerfMapEntry* last_covering(const PerfMap& map, uint64_t addr) {
  const PerfMapEntry* found = nullptr;
  for (const auto& e : map.entries()) {
    if (covers(e, addr)) found = &e;
  }
  return found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  PerfMap map = PerfMap::parse(text);
  expect(map.empty() == map.entries().empty());
  // The scan is quadratic: keep it to maps a fuzzer's inputs make quickly.
  const bool check_all = map.entry_count() <= 256;
  for (const auto& e : map.entries()) {
    expect(e.size > 0 && e.start + e.size > e.start);
    if (!check_all) continue;
    for (uint64_t addr : {e.start - 1, e.start, e.start + e.size / 2, e.start + e.size - 1,
                          e.start + e.size}) {
      expect(map.find(addr) == last_covering(map, addr));
    }
  }
  return 0;
}
