// Symbol lookup, libdw's scan against strata's index, side by side in one
// run (docs/PERFORMANCE.md "strata diagnose on the H200"): for a module
// (default: Debian's libtorch_cpu), the symbol of every function symbol's
// middle address, looked up with dwfl_module_addrinfo (which scans the
// whole table per lookup) and with SymbolIndex (sorted once, then a binary
// search; the index's build is timed with its lookups). Interleaved
// rounds; prints the median time per lookup of each and their ratio, and
// checks both named the same symbol everywhere. Also times, in the same
// rounds, the part of the index's build that names the PLT stubs
// (symbolize/plt_stubs.h), which libdw has no answer for.
//   usage: symbol_lookup [MODULE] [ROUNDS]
#include <elfutils/libdwfl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "symbolize/plt_stubs.h"
#include "symbolize/symbol_index.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13";
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks callbacks{};
  callbacks.find_elf = dwfl_build_id_find_elf;
  callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  callbacks.section_address = dwfl_offline_section_address;
  callbacks.debuginfo_path = &debuginfo_path;
  Dwfl* dwfl = dwfl_begin(&callbacks);
  Dwfl_Module* module = dwfl != nullptr ? dwfl_report_offline(dwfl, "", path, -1) : nullptr;
  if (module == nullptr) {
    std::fprintf(stderr, "symbol_lookup: cannot open %s: %s\n", path, dwfl_errmsg(-1));
    return 2;
  }
  dwfl_report_end(dwfl, nullptr, nullptr);
  std::vector<uint64_t> addresses;
  const int count = dwfl_module_getsymtab(module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    if (dwfl_module_getsym_info(module, i, &sym, &address, nullptr, nullptr, nullptr) != nullptr &&
        GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 0) {
      addresses.push_back(address + sym.st_size / 2);
    }
  }
  // A profile's distinct pcs: a few thousand per large library.
  if (addresses.size() > 5000) addresses.resize(5000);
  std::vector<double> scan_us, index_us, stubs_ms;
  size_t stubs = 0;
  size_t differ = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<const char*> by_scan(addresses.size()), by_index(addresses.size());
    auto t0 = Clock::now();
    for (size_t i = 0; i < addresses.size(); ++i) {
      GElf_Off offset;
      GElf_Sym sym;
      by_scan[i] =
          dwfl_module_addrinfo(module, addresses[i], &offset, &sym, nullptr, nullptr, nullptr);
    }
    auto t1 = Clock::now();
    strata::symbolize::SymbolIndex index(module);
    for (size_t i = 0; i < addresses.size(); ++i) {
      GElf_Off offset;
      GElf_Sym sym;
      by_index[i] = index.lookup(addresses[i], &offset, &sym);
    }
    auto t2 = Clock::now();
    GElf_Addr bias = 0;
    stubs = strata::symbolize::plt_stubs(dwfl_module_getelf(module, &bias)).size();
    auto t3 = Clock::now();
    stubs_ms.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
    scan_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() /
                      static_cast<double>(addresses.size()));
    index_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count() /
                       static_cast<double>(addresses.size()));
    for (size_t i = 0; i < addresses.size(); ++i) {
      differ += (by_scan[i] == nullptr) != (by_index[i] == nullptr) ||
                (by_scan[i] != nullptr && std::strcmp(by_scan[i], by_index[i]) != 0);
    }
  }
  std::printf("module %s: %d symbols, %zu lookups per round, %d rounds\n", path, count,
              addresses.size(), rounds);
  std::printf("%-28s %12s\n", "per lookup (median)", "us");
  std::printf("%-28s %12.3f\n", "dwfl_module_addrinfo", median(scan_us));
  std::printf("%-28s %12.3f\n", "SymbolIndex (build + find)", median(index_us));
  std::printf("PLT stubs named: %zu, in %.3f ms per build (median)\n", stubs, median(stubs_ms));
  std::printf("ratio scan / index %.1f; answers that differ: %zu\n",
              median(scan_us) / median(index_us), differ);
  dwfl_end(dwfl);
  return differ == 0 ? 0 : 1;
}
