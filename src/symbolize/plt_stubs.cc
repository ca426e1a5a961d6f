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

// The GOT slot a stub of `size` bytes at `address` jumps through: its first
// instruction, after an optional endbr64 and bnd prefix, is
// `jmp *disp32(%rip)` (ff 25). nullopt when the bytes are something else
// (PLT0, a lazy .plt entry beside .plt.sec).
std::optional<uint64_t> got_slot_of(const uint8_t* code, uint64_t size, uint64_t address) {
  static constexpr uint8_t kEndbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
  constexpr uint64_t kJumpSize = 6;  // ff 25 disp32
  uint64_t at = 0;
  if (size >= sizeof kEndbr64 && std::memcmp(code, kEndbr64, sizeof kEndbr64) == 0) {
    at += sizeof kEndbr64;
  }
  if (at < size && code[at] == 0xf2) ++at;  // bnd
  if (at + kJumpSize > size || code[at] != 0xff || code[at + 1] != 0x25) return std::nullopt;
  int32_t disp = 0;
  std::memcpy(&disp, code + at + 2, sizeof disp);
  return address + at + kJumpSize + static_cast<int64_t>(disp);
}

struct Jump {
  uint64_t address;  // the stub's
  uint64_t size;
  uint64_t slot;  // the GOT slot it jumps through
};

// The size of the stubs of section `name`: 16 in .plt and .plt.sec; in
// .plt.got 8 (jmp, 2-byte nop), 16 with IBT (endbr64 first), which the
// linker writes as the section's entry size.
uint64_t stub_size_of(const char* name, const GElf_Shdr& header) {
  if (std::strcmp(name, ".plt.got") != 0) return kPltStubSize;
  return header.sh_entsize == 16 ? 16 : 8;
}

// The stubs of the section `name` and the slots they jump through.
void add_jumps(Elf* elf, size_t names, const char* name, std::vector<Jump>* jumps) {
  GElf_Shdr header;
  Elf_Scn* stubs = section_named(elf, names, name, &header);
  if (stubs == nullptr || header.sh_type != SHT_PROGBITS) return;
  Elf_Data* code = elf_getdata(stubs, nullptr);
  if (code == nullptr || code->d_buf == nullptr) return;
  const auto* bytes = static_cast<const uint8_t*>(code->d_buf);
  const uint64_t stub_size = stub_size_of(name, header);
  for (uint64_t at = 0; at + stub_size <= code->d_size; at += stub_size) {
    const auto slot = got_slot_of(bytes + at, stub_size, header.sh_addr + at);
    if (slot) jumps->push_back({header.sh_addr + at, stub_size, *slot});
  }
}

// GOT slot -> the function bound there (a string of the file's symbol table).
using BoundSlots = std::unordered_map<uint64_t, const char*>;

// Names the slots of `bound` that a JUMP_SLOT (.rela.plt) or GLOB_DAT
// (.rela.dyn) relocation of the section `name` binds. The entries are read
// from the raw table (memcpy: a mutated file's may be misaligned): libtorch's
// .rela.dyn holds 173k of them, mostly RELATIVE, and only a few slots matter.
void name_bound_slots(Elf* elf, size_t names, const char* name, BoundSlots* bound) {
  GElf_Shdr rela_header, symbols_header;
  Elf_Scn* rela = section_named(elf, names, name, &rela_header);
  if (rela == nullptr || rela_header.sh_type != SHT_RELA) return;
  Elf_Scn* symbols = elf_getscn(elf, rela_header.sh_link);
  if (symbols == nullptr || gelf_getshdr(symbols, &symbols_header) == nullptr) return;
  Elf_Data* relocations = elf_getdata(rela, nullptr);
  Elf_Data* symbol_data = elf_getdata(symbols, nullptr);
  if (relocations == nullptr || relocations->d_buf == nullptr || symbol_data == nullptr) return;
  const auto* table = static_cast<const char*>(relocations->d_buf);
  const size_t count = relocations->d_size / sizeof(Elf64_Rela);
  for (size_t i = 0; i < count; ++i) {
    Elf64_Rela r;
    std::memcpy(&r, table + i * sizeof r, sizeof r);
    const auto type = ELF64_R_TYPE(r.r_info);
    // Others (an ifunc's IRELATIVE, RELATIVE) have no symbol.
    if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
    auto it = bound->find(r.r_offset);
    if (it == bound->end()) continue;
    GElf_Sym sym;
    if (gelf_getsym(symbol_data, static_cast<int>(ELF64_R_SYM(r.r_info)), &sym) == nullptr) continue;
    const char* symbol = elf_strptr(elf, symbols_header.sh_link, sym.st_name);
    if (symbol != nullptr && *symbol != '\0' && it->second == nullptr) it->second = symbol;
  }
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
  std::vector<Jump> jumps;
  for (const char* section : {".plt", ".plt.sec", ".plt.got"}) add_jumps(elf, names, section, &jumps);
  if (jumps.empty()) return out;

  BoundSlots bound;
  bound.reserve(jumps.size());
  for (const Jump& jump : jumps) bound.emplace(jump.slot, nullptr);
  name_bound_slots(elf, names, ".rela.plt", &bound);
  name_bound_slots(elf, names, ".rela.dyn", &bound);
  for (const Jump& jump : jumps) {
    const char* function = bound.at(jump.slot);
    if (function != nullptr) out.push_back({jump.address, jump.size, std::string(function) + "@plt"});
  }
  return out;
}

}  // namespace strata::symbolize
