// A module's ELF symbols sorted by address, for the symbol of each sampled
// pc. elfutils' dwfl_module_addrinfo scans the whole symbol table on every
// call: on a PyTorch program on the H200 (libtorch_cuda's table is hundreds
// of thousands of symbols) that scan took 88 of `strata cpu`'s 101 s of
// post-processing. The index reads the same table (dwfl_module_getsym_info:
// .symtab, else .dynsym, from the debug file where libdwfl found one) once,
// and answers each lookup with a binary search, choosing as
// dwfl_module_addrinfo chooses: the sized symbol that contains the address
// with the highest start (global over weak over local at the same start),
// else the closest sizeless symbol before it. PLT stubs, which have no
// symbol, are named as perf names them ("memcpy@plt", symbolize/plt_stubs.h).
//
// Threading: built and used by one thread (the symbolizer's).
#pragma once

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace strata::symbolize {

class SymbolIndex {
 public:
  explicit SymbolIndex(Dwfl_Module* module);

  // As dwfl_module_addrinfo(module, address, offset, sym, ...): the name of
  // the symbol for `address` (a relocated address), its offset from the
  // symbol's start and the symbol (st_value relocated), or nullptr.
  const char* lookup(uint64_t address, GElf_Off* offset, GElf_Sym* sym) const;

  size_t size() const { return symbols_.size(); }

 private:
  struct Entry {
    uint64_t start;  // relocated
    GElf_Sym sym;
    const char* name;  // owned by libelf (the module's ELF data)
    int binding_rank;  // global 3, weak 2, else 1
  };
  void add_plt_stubs(Dwfl_Module* module);

  std::vector<Entry> symbols_;  // by start; table order within a start
  std::deque<std::string> stub_names_;  // the PLT stubs' names (a deque: stable addresses)
};

}  // namespace strata::symbolize
