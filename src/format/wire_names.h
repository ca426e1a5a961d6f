// The number <-> name tables of the spool's enums (chunk kinds, drop counters,
// clocks, the instrument and sampler payloads' own numbers). Each enum on the
// wire has one table beside it; names come from the table and a
// static_assert (and tests/format/wire_numbers_test.cc) fails the build when
// two entries share a number or a name.
//
// Threading: constants and pure constexpr functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace strata::format {

struct WireName {
  uint32_t value;
  const char* name;
};

// True when no two entries share a value or a name.
constexpr bool wire_names_unique(std::span<const WireName> table) {
  for (size_t i = 0; i < table.size(); ++i) {
    for (size_t j = i + 1; j < table.size(); ++j) {
      if (table[i].value == table[j].value) return false;
      if (std::string_view(table[i].name) == std::string_view(table[j].name)) return false;
    }
  }
  return true;
}

// The entry's name, or "unknown" for a value the table does not hold.
constexpr const char* wire_name(std::span<const WireName> table, uint32_t value) {
  for (const WireName& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "unknown";
}

}  // namespace strata::format
