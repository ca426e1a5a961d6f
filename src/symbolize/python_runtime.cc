#include "symbolize/python_runtime.h"

#include <gelf.h>
#include <libelf.h>

#include <cstring>

#include "symbolize/elf_file.h"

namespace strata::symbolize {
namespace {

struct Symbols {
  std::optional<uint64_t> runtime;     // st_value of _PyRuntime
  std::optional<uint64_t> py_version;  // st_value of Py_Version
};

Symbols find_symbols(const ElfFile& file) {
  Symbols out;
  Elf* elf = elf_memory(const_cast<char*>(reinterpret_cast<const char*>(file.data())), file.size());
  if (elf == nullptr) return out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || sh.sh_entsize == 0) continue;
    const size_t count = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
      if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name == nullptr) continue;
      if (std::strcmp(name, "_PyRuntime") == 0) out.runtime = sym.st_value;
      if (std::strcmp(name, "Py_Version") == 0) out.py_version = sym.st_value;
    }
  }
  elf_end(elf);
  return out;
}

// The 4 bytes of the file at load address `vaddr`, when the file holds them.
std::optional<uint32_t> word_at(const ElfFile& file, uint64_t vaddr) {
  for (const auto& seg : file.segments()) {
    if (vaddr < seg.vaddr || vaddr - seg.vaddr + 4 > seg.filesz) continue;
    const uint64_t at = seg.offset + (vaddr - seg.vaddr);
    if (at > file.size() || file.size() - at < 4) return std::nullopt;
    uint32_t value;
    std::memcpy(&value, file.data() + at, sizeof value);
    return value;
  }
  return std::nullopt;
}

// "3.11" from ".../python3.11" or ".../libpython3.11.so.1.0".
void version_from_name(const std::string& path, int* major, int* minor) {
  const std::string base = path.substr(path.rfind('/') + 1);
  const size_t at = base.find("python3.");
  if (at == std::string::npos) return;
  int value = 0;
  size_t i = at + 8;
  for (; i < base.size() && i < at + 11 && base[i] >= '0' && base[i] <= '9'; ++i) {
    value = value * 10 + (base[i] - '0');
  }
  if (i == at + 8) return;
  *major = 3;
  *minor = value;
}

}  // namespace

bool is_python_module_name(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  return base.rfind("python", 0) == 0 || base.rfind("libpython", 0) == 0;
}

std::optional<PythonRuntimeSymbol> find_python_runtime(const std::string& path, uint64_t start,
                                                       uint64_t pgoff) {
  if (!is_python_module_name(path)) return std::nullopt;
  auto file = ElfFile::open(path);
  if (!file.ok()) return std::nullopt;
  const ElfFile& elf = **file;
  const Symbols symbols = find_symbols(elf);
  PythonRuntimeSymbol out;
  if (symbols.py_version) {
    if (auto hex = word_at(elf, *symbols.py_version)) {
      out.major = static_cast<int>((*hex >> 24) & 0xff);
      out.minor = static_cast<int>((*hex >> 16) & 0xff);
    }
  }
  if (out.major == 0) version_from_name(path, &out.major, &out.minor);
  if (!symbols.runtime) {
    // The executable of a shared build holds no runtime: its libpython does
    // (and is mapped next). Only a file that is no client of libpython
    // explains missing names.
    const bool is_library = path.find("libpython") != std::string::npos;
    if (!is_library && out.major == 0) return std::nullopt;
    out.problem = "it has no _PyRuntime symbol (stripped of its dynamic symbols too)";
    return out;
  }
  std::optional<uint64_t> bias = elf.is_exec() ? std::optional<uint64_t>(0) : elf.bias_for(start, pgoff);
  if (!bias) return std::nullopt;
  out.address = *bias + *symbols.runtime;
  return out;
}

}  // namespace strata::symbolize
