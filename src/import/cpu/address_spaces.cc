#include "import/cpu/address_spaces.h"

#include <set>
#include <vector>

namespace strata::import {
namespace {

constexpr uint32_t kProtExec = 0x4;  // PROT_EXEC

// A chain of forks longer than this is taken as a loop in bad records.
constexpr size_t kMaxAncestors = 64;

symbolize::Mapping to_symbolize_mapping(const sampler::Mapping& m) {
  symbolize::Mapping out;
  out.start = m.addr;
  out.end = m.addr + m.len;
  out.pgoff = m.pgoff;
  out.path = m.filename;
  out.build_id = m.has_build_id ? hex_build_id(m) : "";
  // MMAP (not MMAP2) records carry no protection: take them as code.
  out.executable = (m.prot & kProtExec) != 0 || m.prot == 0;
  return out;
}

// pid, its parent, ... the oldest ancestor last.
std::vector<uint32_t> ancestry(uint32_t pid, const std::map<uint32_t, uint32_t>& parent) {
  std::vector<uint32_t> chain;
  for (uint32_t p = pid; chain.size() < kMaxAncestors;) {
    chain.push_back(p);
    auto it = parent.find(p);
    if (it == parent.end()) break;
    p = it->second;
  }
  return chain;
}

}  // namespace

std::string hex_build_id(const sampler::Mapping& m) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < m.build_id_size && i < m.build_id.size(); ++i) {
    out += kDigits[m.build_id[i] >> 4];
    out += kDigits[m.build_id[i] & 15];
  }
  return out;
}

std::map<uint32_t, symbolize::AddressSpace> address_spaces(const sampler::RawProfile& raw) {
  std::map<uint32_t, uint32_t> parent;
  for (const auto& t : raw.tasks) {
    if (t.fork && t.pid != t.ppid) parent[t.pid] = t.ppid;
  }
  std::set<uint32_t> pids;
  for (const auto& s : raw.samples) pids.insert(s.pid);
  std::map<uint32_t, symbolize::AddressSpace> spaces;
  for (uint32_t pid : pids) {
    symbolize::AddressSpace space;
    space.pid = static_cast<int>(pid);
    std::vector<uint32_t> chain = ancestry(pid, parent);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      auto maps = raw.mmaps.find(*it);
      if (maps == raw.mmaps.end()) continue;
      for (const auto& m : maps->second) space.mappings.push_back(to_symbolize_mapping(m));
    }
    spaces.emplace(pid, std::move(space));
  }
  return spaces;
}

}  // namespace strata::import
