#include "test_util.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace strata::symbolize::testing {

std::string libc_path() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.find("/libc.so") != std::string::npos) *static_cast<std::string*>(out) = name;
        return 0;
      },
      &path);
  return path;
}

int marker_line(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::string line;
  std::string tag = "MARK:" + name;
  for (int n = 1; std::getline(in, line); ++n) {
    size_t at = line.find(tag);
    if (at == std::string::npos) continue;
    size_t after = at + tag.size();
    if (after == line.size() ||
        !(std::isalnum(static_cast<unsigned char>(line[after])) || line[after] == '_')) {
      return n;
    }
  }
  return 0;
}

namespace {

template <class F>
void with_elf(const std::string& path, F f) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf != nullptr) {
    f(elf);
    elf_end(elf);
  }
  close(fd);
}

}  // namespace

std::vector<Mapping> mappings_for_file(const std::string& path, uint64_t base) {
  std::vector<Mapping> out;
  with_elf(path, [&](Elf* elf) {
    size_t phnum = 0;
    elf_getphdrnum(elf, &phnum);
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
      Mapping m;
      m.start = base + (ph.p_vaddr & ~uint64_t{0xfff});
      m.end = (base + ph.p_vaddr + ph.p_memsz + 0xfff) & ~uint64_t{0xfff};
      m.pgoff = ph.p_offset & ~uint64_t{0xfff};
      m.path = path;
      m.executable = (ph.p_flags & PF_X) != 0;
      out.push_back(m);
    }
  });
  return out;
}

// Calls f(sym, name) for every entry of the file's .symtab.
template <class F>
void for_each_symbol(const std::string& path, F f) {
  with_elf(path, [&](Elf* elf) {
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
      GElf_Shdr sh;
      if (gelf_getshdr(scn, &sh) == nullptr || sh.sh_type != SHT_SYMTAB) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
      for (size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
        const char* n = elf_strptr(elf, sh.sh_link, sym.st_name);
        if (n != nullptr) f(sym, n);
      }
    }
  });
}

uint64_t symbol_value(const std::string& path, const std::string& name) {
  uint64_t value = 0;
  for_each_symbol(path, [&](const GElf_Sym& sym, const char* n) {
    if (name == n) value = sym.st_value;
  });
  return value;
}

std::vector<FunctionSymbol> function_symbols(const std::string& path) {
  std::vector<FunctionSymbol> out;
  for_each_symbol(path, [&](const GElf_Sym& sym, const char* n) {
    if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value != 0)
      out.push_back({n, sym.st_value, sym.st_size});
  });
  return out;
}

bool run_command(const std::string& command) {
  return std::system(command.c_str()) == 0;
}

}  // namespace strata::symbolize::testing
