#include "symbolize/symbol_index.h"

#include <algorithm>

#include "symbolize/plt_stubs.h"

namespace strata::symbolize {
namespace {

// How far back from the address a lookup walks for a sized symbol that
// contains it: symbols nest only by aliasing or in hand-written assembly,
// and a walk this long has passed every real candidate.
constexpr size_t kMaxWalkBack = 256;

int binding_rank(const GElf_Sym& sym) {
  switch (GELF_ST_BIND(sym.st_info)) {
    case STB_GLOBAL:
      return 3;
    case STB_WEAK:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

SymbolIndex::SymbolIndex(Dwfl_Module* module) {
  const int count = dwfl_module_getsymtab(module);
  for (int i = 1; i < count; ++i) {  // entry 0 is the null symbol
    GElf_Sym sym;
    GElf_Addr address = 0;
    GElf_Word section = 0;
    const char* name =
        dwfl_module_getsym_info(module, i, &sym, &address, &section, nullptr, nullptr);
    if (name == nullptr || *name == '\0' || section == SHN_UNDEF) continue;
    // The kinds dwfl_module_addrinfo leaves out: they name no code.
    const int type = GELF_ST_TYPE(sym.st_info);
    if (type == STT_SECTION || type == STT_FILE || type == STT_TLS) continue;
    sym.st_value = address;
    symbols_.push_back({address, sym, name, binding_rank(sym)});
  }
  add_plt_stubs(module);
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const Entry& a, const Entry& b) { return a.start < b.start; });
}

void SymbolIndex::add_plt_stubs(Dwfl_Module* module) {
  // The stubs live in the module's own file (a debug file has no .plt
  // contents), at its load bias.
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module, &bias);
  for (PltStub& stub : plt_stubs(elf)) {
    GElf_Sym sym{};
    sym.st_info = GELF_ST_INFO(STB_LOCAL, STT_FUNC);
    sym.st_value = stub.address + bias;
    sym.st_size = stub.size;
    stub_names_.push_back(std::move(stub.name));
    symbols_.push_back({sym.st_value, sym, stub_names_.back().c_str(), binding_rank(sym)});
  }
}

const char* SymbolIndex::lookup(uint64_t address, GElf_Off* offset, GElf_Sym* sym) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](uint64_t a, const Entry& e) { return a < e.start; });
  const Entry* containing = nullptr;
  const Entry* sizeless = nullptr;
  // The end of the last sized symbol that ends before the address: a
  // sizeless symbol before it names the sized one's code, not this address.
  uint64_t min_label = 0;
  size_t walked = 0;
  for (auto it = after; it != symbols_.begin() && walked < kMaxWalkBack; ++walked) {
    --it;
    if (containing != nullptr && it->start < containing->start) break;  // past the best start
    if (it->sym.st_size == 0) {
      if (sizeless == nullptr) sizeless = &*it;
      continue;
    }
    if (address - it->start >= it->sym.st_size) {
      min_label = std::max(min_label, it->start + it->sym.st_size);
      continue;
    }
    // Walking back, a later entry at the same start came first in the
    // table: it wins ties of binding, as the table scan keeps its first.
    if (containing == nullptr || it->binding_rank >= containing->binding_rank) containing = &*it;
  }
  if (sizeless != nullptr && sizeless->start < min_label) sizeless = nullptr;
  const Entry* best = containing != nullptr ? containing : sizeless;
  if (best == nullptr) return nullptr;
  *offset = address - best->start;
  *sym = best->sym;
  return best->name;
}

}  // namespace strata::symbolize
