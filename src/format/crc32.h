// CRC-32 as in zlib, PNG and Ethernet (IEEE 802.3: reflected, polynomial
// 0xEDB88320, initial value and final xor 0xFFFFFFFF), the checksum of spool
// headers and chunks. crc32("123456789") == 0xCBF43926.
//
// Slice-by-16 over tables computed at compile time: there is no init step
// and no mutable state, so it runs from signal handlers and before main().
// Thread-safe, allocation-free, async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::format {

// Continues a checksum: crc32_update(crc32_update(0, a), b) is the CRC of a
// followed by b, and crc32_update(0, ...) starts a new one.
uint32_t crc32_update(uint32_t crc, const void* data, size_t size);

inline uint32_t crc32(const void* data, size_t size) {
  return crc32_update(0, data, size);
}

// One byte at a time, straight from the definition: the reference the fast
// version is tested against.
uint32_t crc32_bitwise(const void* data, size_t size);

}  // namespace strata::format
