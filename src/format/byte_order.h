// Little-endian loads and stores for the spool's wire layout. Fields are
// encoded one by one at fixed offsets instead of memcpy'ing structs, so that
// padding, alignment and host byte order never leak into the file.
//
// Every function here is a few instructions, allocation-free and
// async-signal-safe (the agent encodes chunk headers in crash handlers).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace strata::format {

namespace detail {

template <class T>
inline T to_little(T value) {
  if constexpr (std::endian::native == std::endian::little) {
    return value;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(value));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(value));
  } else {
    return static_cast<T>(__builtin_bswap64(value));
  }
}

}  // namespace detail

// memcpy makes unaligned access well-defined; compilers turn it into one move.
inline uint16_t load_le16(const void* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return detail::to_little(v);
}
inline uint32_t load_le32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return detail::to_little(v);
}
inline uint64_t load_le64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return detail::to_little(v);
}

inline void store_le16(void* p, uint16_t v) {
  v = detail::to_little(v);
  std::memcpy(p, &v, sizeof v);
}
inline void store_le32(void* p, uint32_t v) {
  v = detail::to_little(v);
  std::memcpy(p, &v, sizeof v);
}
inline void store_le64(void* p, uint64_t v) {
  v = detail::to_little(v);
  std::memcpy(p, &v, sizeof v);
}

}  // namespace strata::format
