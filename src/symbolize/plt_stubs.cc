#include "symbolize/plt_stubs.h"

#include <cstring>
#include <optional>
#include <unordered_map>

namespace strata::symbolize {
namespace {

Elf_Scn* section_named(Elf* elf, size_t names, const char* name, GElf_Shdr* header) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    if (gelf_getshdr(scn, header) == nullptr) continue;
    const char* n = elf_strptr(elf, names, header->sh_name);
    if (n != nullptr && std::strcmp(n, name) == 0) return scn;
  }
  return nullptr;
}

// The GOT slot a stub at `address` jumps through: its first instruction,
// after an optional endbr64 and bnd prefix, is `jmp *disp32(%rip)`
// (ff 25). nullopt when the bytes are something else (PLT0, a lazy .plt
// entry beside .plt.sec).
std::optional<uint64_t> got_slot_of(const uint8_t* code, uint64_t address) {
  size_t at = 0;
  static constexpr uint8_t kEndbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
  if (std::memcmp(code, kEndbr64, sizeof kEndbr64) == 0) at += sizeof kEndbr64;
  if (code[at] == 0xf2) ++at;  // bnd
  if (code[at] != 0xff || code[at + 1] != 0x25) return std::nullopt;
  int32_t disp = 0;
  std::memcpy(&disp, code + at + 2, sizeof disp);
  return address + at + 6 + static_cast<int64_t>(disp);
}

}  // namespace

std::vector<PltStub> plt_stubs(Elf* elf) {
  std::vector<PltStub> out;
  GElf_Ehdr ehdr;
  size_t names = 0;
  if (elf == nullptr || gelf_getclass(elf) != ELFCLASS64 || gelf_getehdr(elf, &ehdr) == nullptr ||
      ehdr.e_machine != EM_X86_64 || elf_getshdrstrndx(elf, &names) != 0) {
    return out;
  }
  GElf_Shdr rela_header, symbols_header;
  Elf_Scn* rela = section_named(elf, names, ".rela.plt", &rela_header);
  if (rela == nullptr || rela_header.sh_type != SHT_RELA) return out;
  Elf_Scn* symbols = elf_getscn(elf, rela_header.sh_link);
  if (symbols == nullptr || gelf_getshdr(symbols, &symbols_header) == nullptr) return out;
  Elf_Data* relocations = elf_getdata(rela, nullptr);
  Elf_Data* symbol_data = elf_getdata(symbols, nullptr);
  if (relocations == nullptr || symbol_data == nullptr) return out;

  // GOT slot -> the function a JUMP_SLOT relocation binds there.
  std::unordered_map<uint64_t, std::string> bound;
  const size_t count = relocations->d_size / sizeof(Elf64_Rela);
  for (size_t i = 0; i < count; ++i) {
    GElf_Rela r;
    if (gelf_getrela(relocations, static_cast<int>(i), &r) == nullptr) break;
    if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT) continue;  // an ifunc's: no symbol
    GElf_Sym sym;
    if (gelf_getsym(symbol_data, static_cast<int>(GELF_R_SYM(r.r_info)), &sym) == nullptr) continue;
    const char* name = elf_strptr(elf, symbols_header.sh_link, sym.st_name);
    if (name != nullptr && *name != '\0') bound.emplace(r.r_offset, std::string(name) + "@plt");
  }
  if (bound.empty()) return out;

  for (const char* section : {".plt", ".plt.sec"}) {
    GElf_Shdr header;
    Elf_Scn* stubs = section_named(elf, names, section, &header);
    if (stubs == nullptr || header.sh_type != SHT_PROGBITS) continue;
    Elf_Data* code = elf_getdata(stubs, nullptr);
    if (code == nullptr || code->d_buf == nullptr) continue;
    const auto* bytes = static_cast<const uint8_t*>(code->d_buf);
    for (uint64_t at = 0; at + kPltStubSize <= code->d_size; at += kPltStubSize) {
      const auto slot = got_slot_of(bytes + at, header.sh_addr + at);
      if (!slot) continue;
      auto it = bound.find(*slot);
      if (it != bound.end()) out.push_back({header.sh_addr + at, it->second});
    }
  }
  return out;
}

}  // namespace strata::symbolize
