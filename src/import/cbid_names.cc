#include "import/cbid_names.h"

#include <array>
#include <span>
#include <vector>

namespace strata::import {
namespace {

struct CbidName {
  uint32_t cbid;
  const char* name;
};

#include "cbid_names.inc"

// Dense lookup by cbid (ids are small and nearly contiguous).
std::vector<std::string_view> index(std::span<const CbidName> table) {
  uint32_t max = 0;
  for (const auto& e : table) max = e.cbid > max ? e.cbid : max;
  std::vector<std::string_view> names(max + 1);
  for (const auto& e : table) names[e.cbid] = e.name;
  return names;
}

std::string_view lookup(const std::vector<std::string_view>& names, uint32_t cbid) {
  return cbid < names.size() ? names[cbid] : std::string_view();
}

}  // namespace

std::string_view runtime_cbid_name(uint32_t cbid) {
  static const std::vector<std::string_view> names = index(kRuntimeCbidNames);
  return lookup(names, cbid);
}

std::string_view driver_cbid_name(uint32_t cbid) {
  static const std::vector<std::string_view> names = index(kDriverCbidNames);
  return lookup(names, cbid);
}

}  // namespace strata::import
