#include "symbolize/python_methods.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace strata::symbolize {
namespace {

// Offsets of the fields the scan reads (see the header's table).
constexpr uint64_t kModuleBaseEnd = 40;  // PyModuleDef_Base: refcnt, type, m_init, m_index, m_copy
constexpr uint64_t kModuleName = 40;
constexpr uint64_t kModuleMethods = 64;
constexpr uint64_t kTypeName = 24;
constexpr uint64_t kTypeBasicSize = 32;
constexpr uint64_t kTypeMethods = 232;
constexpr uint64_t kSpecSlots = 24;
constexpr uint64_t kMethodDefSize = 32;
constexpr int kPyTpMethods = 64;         // Include/typeslots.h
constexpr int kLastSlotId = 100;         // 3.13 ends at 83; room for later ones
constexpr uint64_t kKnownFlags = 0x3ff;  // METH_VARARGS .. METH_METHOD
constexpr size_t kMaxMethods = 2000;     // per table; torch's largest has ~1,500
constexpr size_t kMaxSlots = 128;
constexpr size_t kMaxName = 200;
constexpr size_t kMaxLoads = 16;
// Symbol tables and relocation sections read per type: real files have one
// or two; a hostile one could list the same big table thousands of times.
constexpr size_t kMaxTablesPerType = 4;

// The file's bytes seen at their load addresses, with relocations applied.
class Image {
 public:
  explicit Image(const ElfFile& file) : data_(file.data()), size_(file.size()) {}

  // False for anything but a well-formed x86-64 ELF64 header and tables.
  bool parse() {
    if (size_ < sizeof(Elf64_Ehdr) || std::memcmp(data_, ELFMAG, SELFMAG) != 0) return false;
    Elf64_Ehdr eh;
    std::memcpy(&eh, data_, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_machine != EM_X86_64) {
      return false;
    }
    for (uint16_t i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      if (!read_struct(eh.e_phoff, i, eh.e_phentsize, &ph)) return false;
      if (ph.p_type != PT_LOAD && ph.p_type != PT_GNU_EH_FRAME) continue;
      // A segment must fit in the file and in the address space: a wrapped
      // end would make the scan below endless.
      if (ph.p_offset > size_ || ph.p_filesz > size_ - ph.p_offset || ph.p_filesz > ph.p_memsz ||
          ph.p_vaddr > std::numeric_limits<uint64_t>::max() - ph.p_memsz) {
        return false;
      }
      program_headers_.push_back(ph);
      if (ph.p_type == PT_LOAD) loads_.push_back(ph);
    }
    // Real files have 2 to 5 loadable segments; many more only make every
    // word lookup slower (each walks the list).
    if (loads_.size() > kMaxLoads) return false;
    for (uint16_t i = 0; i < eh.e_shnum; ++i) {
      Elf64_Shdr sh;
      if (!read_struct(eh.e_shoff, i, eh.e_shentsize, &sh)) return false;
      sections_.push_back(sh);
    }
    return true;
  }

  // Whether .dynsym names any Py* or _Py* symbol, defined or imported.
  bool uses_python_api() const {
    for (const auto& sh : sections_) {
      if (sh.sh_type != SHT_DYNSYM) continue;
      bool found = false;
      for_each_symbol(sh, [&](const Elf64_Sym&, std::string_view name) {
        if (name.starts_with("Py") || name.starts_with("_Py")) found = true;
      });
      if (found) return true;
    }
    return false;
  }

  // Function symbols by address (.symtab first, so local functions count),
  // and the relocated pointer words.
  void load_symbols_and_relocations() {
    for (uint32_t type : {SHT_SYMTAB, SHT_DYNSYM}) {
      size_t tables = 0;
      for (const auto& sh : sections_) {
        if (sh.sh_type != type || ++tables > kMaxTablesPerType) continue;
        for_each_symbol(sh, [&](const Elf64_Sym& sym, std::string_view name) {
          if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
              sym.st_value != 0 && !name.empty()) {
            functions_.try_emplace(sym.st_value, name);
          }
        });
      }
    }
    for (const auto& [address, name] : functions_) function_named_.try_emplace(name, address);
    size_t rela_tables = 0;
    for (const auto& sh : sections_) {
      if (sh.sh_type != SHT_RELA || sh.sh_entsize != sizeof(Elf64_Rela)) continue;
      if (++rela_tables > kMaxTablesPerType) break;
      const Elf64_Shdr* symtab = sh.sh_link < sections_.size() ? &sections_[sh.sh_link] : nullptr;
      for (uint64_t i = 0; i < sh.sh_size / sizeof(Elf64_Rela); ++i) {
        Elf64_Rela r;
        if (!read_struct(sh.sh_offset, i, sizeof r, &r)) break;
        uint32_t type = ELF64_R_TYPE(r.r_info);
        if (type == R_X86_64_RELATIVE) {
          relocated_[r.r_offset] = static_cast<uint64_t>(r.r_addend);
        } else if (type == R_X86_64_JUMP_SLOT && symtab != nullptr) {
          if (auto name = symbol_name(*symtab, ELF64_R_SYM(r.r_info))) {
            jump_slots_[r.r_offset] = *name;
          }
        } else if (type == R_X86_64_64 && symtab != nullptr) {
          Elf64_Sym sym;
          if (read_struct(symtab->sh_offset, ELF64_R_SYM(r.r_info), sizeof sym, &sym) &&
              sym.st_shndx != SHN_UNDEF) {
            relocated_[r.r_offset] = sym.st_value + static_cast<uint64_t>(r.r_addend);
          }
        }
      }
    }
  }

  // The pointer-sized word at a load address: the relocation's value when
  // there is one, else the file's bytes (zero past a segment's file size).
  std::optional<uint64_t> word(uint64_t addr) const {
    if (auto it = relocated_.find(addr); it != relocated_.end()) return it->second;
    const Elf64_Phdr* ph = segment_of(addr, 8);
    if (ph == nullptr) return std::nullopt;
    uint64_t in = addr - ph->p_vaddr;
    if (in + 8 > ph->p_filesz)
      return in >= ph->p_filesz ? std::optional<uint64_t>(0) : std::nullopt;
    uint64_t value;
    std::memcpy(&value, data_ + ph->p_offset + in, 8);
    return value;
  }

  // The NUL-terminated string at a load address, when it is a plausible
  // Python name: identifier characters and dots, not empty.
  std::optional<std::string_view> name_at(uint64_t addr) const {
    const Elf64_Phdr* ph = segment_of(addr, 1);
    if (ph == nullptr) return std::nullopt;
    uint64_t in = addr - ph->p_vaddr;
    if (in >= ph->p_filesz) return std::nullopt;
    const char* start = reinterpret_cast<const char*>(data_ + ph->p_offset + in);
    size_t room = std::min<uint64_t>(ph->p_filesz - in, kMaxName + 1);
    size_t n = 0;
    for (; n < room && start[n] != '\0'; ++n) {
      char c = start[n];
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.';
      if (!ok) return std::nullopt;
    }
    if (n == 0 || n == room) return std::nullopt;
    if (start[0] >= '0' && start[0] <= '9') return std::nullopt;
    return std::string_view(start, n);
  }

  // Where a function that is only a tail call goes: `jmp rel32` as its
  // first instruction (after endbr64), to a function or through a PLT stub
  // (`jmp *GOT(%rip)`, maybe endbr64 and bnd first) to the function the GOT
  // slot names. Clinic wrappers compile to this: str.join's ml_meth,
  // unicode_join, is `jmp PyUnicode_Join`, so only PyUnicode_Join is ever
  // on a sampled stack.
  std::optional<uint64_t> tail_call_target(uint64_t addr) const {
    auto code = bytes_at(addr, 9);
    if (!code) return std::nullopt;
    const uint8_t* p = *code;
    uint64_t at = addr;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) p += 4, at += 4;
    if (p[0] != 0xe9) return std::nullopt;
    int32_t rel;
    std::memcpy(&rel, p + 1, 4);
    uint64_t target = at + 5 + static_cast<int64_t>(rel);
    if (is_function_start(target)) return target;
    // A PLT stub.
    auto stub = bytes_at(target, 16);
    if (!stub) return std::nullopt;
    const uint8_t* s = *stub;
    uint64_t ip = target;
    if (s[0] == 0xf3 && s[1] == 0x0f && s[2] == 0x1e && s[3] == 0xfa) s += 4, ip += 4;
    if (s[0] == 0xf2) s += 1, ip += 1;  // bnd
    if (s[0] != 0xff || s[1] != 0x25) return std::nullopt;
    int32_t disp;
    std::memcpy(&disp, s + 2, 4);
    auto slot = jump_slots_.find(ip + 6 + static_cast<int64_t>(disp));
    if (slot == jump_slots_.end()) return std::nullopt;
    auto target_fn = function_named_.find(slot->second);
    if (target_fn == function_named_.end()) return std::nullopt;
    return target_fn->second;
  }

  const std::string_view* function_at(uint64_t addr) const {
    auto it = functions_.find(addr);
    return it == functions_.end() ? nullptr : &it->second;
  }

  // Whether a function starts at `addr`: a symbol's value, or where CFI
  // says one begins (all a stripped file tells).
  bool is_function_start(uint64_t addr) const {
    if (functions_.count(addr)) return true;
    auto it = std::lower_bound(cfi_.begin(), cfi_.end(), std::make_pair(addr, uint64_t{0}));
    return it != cfi_.end() && it->first == addr;
  }

  // The [start, end) of every FDE, from .eh_frame_hdr's sorted table. Only
  // the encodings GNU ld writes are read (table datarel|sdata4, FDE
  // addresses pcrel|sdata4); any other leaves the list empty.
  void load_cfi() {
    for (const auto& ph : program_headers_) {
      if (ph.p_type != PT_GNU_EH_FRAME) continue;
      auto header = bytes_at(ph.p_vaddr, 12);
      if (!header) return;
      const uint8_t* h = *header;
      constexpr uint8_t kPcrelSdata4 = 0x1b, kUdata4 = 0x03, kDatarelSdata4 = 0x3b;
      if (h[0] != 1 || h[1] != kPcrelSdata4 || h[2] != kUdata4 || h[3] != kDatarelSdata4) return;
      uint32_t count;
      std::memcpy(&count, h + 8, 4);
      auto table = bytes_at(ph.p_vaddr + 12, uint64_t{count} * 8);
      if (!table) return;
      cfi_.reserve(count);
      for (uint32_t i = 0; i < count; ++i) {
        int32_t start_rel, fde_rel;
        std::memcpy(&start_rel, *table + 8 * i, 4);
        std::memcpy(&fde_rel, *table + 8 * i + 4, 4);
        uint64_t start = ph.p_vaddr + static_cast<int64_t>(start_rel);
        uint64_t fde = ph.p_vaddr + static_cast<int64_t>(fde_rel);
        // FDE: length, CIE pointer, pc_begin (pcrel sdata4), pc_range.
        auto body = bytes_at(fde, 16);
        if (!body) continue;
        int32_t begin_rel;
        uint32_t range;
        std::memcpy(&begin_rel, *body + 8, 4);
        std::memcpy(&range, *body + 12, 4);
        if (fde + 8 + static_cast<int64_t>(begin_rel) != start) continue;  // another encoding
        cfi_.emplace_back(start, start + range);
      }
      std::sort(cfi_.begin(), cfi_.end());
      return;
    }
  }

  const std::vector<std::pair<uint64_t, uint64_t>>& cfi() const { return cfi_; }

  bool has_functions() const { return !functions_.empty() || !cfi_.empty(); }

  // Writable loaded ranges: where initialized structs live.
  std::vector<std::pair<uint64_t, uint64_t>> data_ranges() const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& ph : loads_) {
      if (ph.p_flags & PF_W) out.emplace_back(ph.p_vaddr, ph.p_vaddr + ph.p_filesz);
    }
    return out;
  }

 private:
  template <class T>
  bool read_struct(uint64_t table, uint64_t index, uint64_t entsize, T* out) const {
    if (entsize < sizeof(T) || table > size_) return false;
    if (index > (size_ - table) / entsize) return false;
    uint64_t at = table + index * entsize;
    if (at > size_ || sizeof(T) > size_ - at) return false;
    std::memcpy(out, data_ + at, sizeof(T));
    return true;
  }

  template <class Visit>
  void for_each_symbol(const Elf64_Shdr& sh, Visit&& visit) const {
    if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= sections_.size()) return;
    const Elf64_Shdr& strtab = sections_[sh.sh_link];
    if (strtab.sh_offset > size_ || strtab.sh_size > size_ - strtab.sh_offset) return;
    const char* strings = reinterpret_cast<const char*>(data_ + strtab.sh_offset);
    for (uint64_t i = 0; i < sh.sh_size / sizeof(Elf64_Sym); ++i) {
      Elf64_Sym sym;
      if (!read_struct(sh.sh_offset, i, sizeof sym, &sym)) return;
      if (sym.st_name >= strtab.sh_size) continue;
      const char* name = strings + sym.st_name;
      visit(sym, std::string_view(name, strnlen(name, strtab.sh_size - sym.st_name)));
    }
  }

  // `len` bytes of the file at a load address, when the file holds them.
  std::optional<const uint8_t*> bytes_at(uint64_t addr, uint64_t len) const {
    const Elf64_Phdr* ph = segment_of(addr, len);
    if (ph == nullptr || addr - ph->p_vaddr + len > ph->p_filesz) return std::nullopt;
    return data_ + ph->p_offset + (addr - ph->p_vaddr);
  }

  std::optional<std::string_view> symbol_name(const Elf64_Shdr& symtab, uint64_t index) const {
    if (symtab.sh_link >= sections_.size()) return std::nullopt;
    const Elf64_Shdr& strtab = sections_[symtab.sh_link];
    Elf64_Sym sym;
    if (!read_struct(symtab.sh_offset, index, sizeof sym, &sym)) return std::nullopt;
    if (strtab.sh_offset > size_ || strtab.sh_size > size_ - strtab.sh_offset ||
        sym.st_name >= strtab.sh_size) {
      return std::nullopt;
    }
    const char* name = reinterpret_cast<const char*>(data_ + strtab.sh_offset + sym.st_name);
    return std::string_view(name, strnlen(name, strtab.sh_size - sym.st_name));
  }

  const Elf64_Phdr* segment_of(uint64_t addr, uint64_t len) const {
    for (const auto& ph : loads_) {
      if (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_memsz &&
          len <= ph.p_memsz - (addr - ph.p_vaddr)) {
        return &ph;
      }
    }
    return nullptr;
  }

  const uint8_t* data_;
  size_t size_;
  std::vector<Elf64_Phdr> program_headers_;
  std::vector<Elf64_Phdr> loads_;
  std::vector<std::pair<uint64_t, uint64_t>> cfi_;
  std::vector<Elf64_Shdr> sections_;
  std::unordered_map<uint64_t, std::string_view> functions_;
  std::unordered_map<std::string_view, uint64_t> function_named_;
  std::unordered_map<uint64_t, uint64_t> relocated_;
  std::unordered_map<uint64_t, std::string_view> jump_slots_;  // GOT slot -> symbol
};

struct Method {
  std::string_view name;
  uint64_t address = 0;       // ml_meth
  std::string_view function;  // its symbol; "" in a stripped file
};

// The PyMethodDef array at `addr`, when every entry up to the terminator is
// one; nullopt otherwise.
std::optional<std::vector<Method>> method_table(const Image& image, uint64_t addr) {
  std::vector<Method> methods;
  for (size_t i = 0; i <= kMaxMethods; ++i, addr += kMethodDefSize) {
    auto name_ptr = image.word(addr);
    if (!name_ptr) return std::nullopt;
    if (*name_ptr == 0) break;  // the {NULL, NULL, 0, NULL} sentinel
    if (i == kMaxMethods) return std::nullopt;
    auto name = image.name_at(*name_ptr);
    auto meth = image.word(addr + 8);
    auto flags = image.word(addr + 16);
    if (!name || !meth || !flags || ((*flags & 0xffffffffu) & ~kKnownFlags) != 0) {
      return std::nullopt;
    }
    if (!image.is_function_start(*meth)) return std::nullopt;
    const std::string_view* function = image.function_at(*meth);
    methods.push_back({*name, *meth, function ? *function : std::string_view()});
  }
  if (methods.empty()) return std::nullopt;
  return methods;
}

// The methods a PyModuleDef at `at` defines.
std::optional<std::vector<Method>> module_methods(const Image& image, uint64_t at,
                                                  std::string_view* module) {
  for (uint64_t off = 8; off < kModuleBaseEnd; off += 8) {
    auto w = image.word(at + off);
    if (!w || *w != 0) return std::nullopt;
  }
  auto name_ptr = image.word(at + kModuleName);
  auto methods_ptr = image.word(at + kModuleMethods);
  if (!name_ptr || !methods_ptr || *methods_ptr == 0) return std::nullopt;
  auto name = image.name_at(*name_ptr);
  if (!name) return std::nullopt;
  *module = *name;
  return method_table(image, *methods_ptr);
}

// The methods a static PyTypeObject at `at` defines.
std::optional<std::vector<Method>> type_methods(const Image& image, uint64_t at,
                                                std::string_view* type) {
  auto basic_size = image.word(at + kTypeBasicSize);
  if (!basic_size || *basic_size == 0 || *basic_size > (1u << 24)) return std::nullopt;
  auto name_ptr = image.word(at + kTypeName);
  auto methods_ptr = image.word(at + kTypeMethods);
  if (!name_ptr || !methods_ptr || *methods_ptr == 0) return std::nullopt;
  auto name = image.name_at(*name_ptr);
  if (!name) return std::nullopt;
  *type = *name;
  return method_table(image, *methods_ptr);
}

// The methods of the Py_tp_methods slot of a PyType_Spec at `at`.
std::optional<std::vector<Method>> spec_methods(const Image& image, uint64_t at,
                                                std::string_view* type) {
  auto name_ptr = image.word(at);
  auto slots_ptr = image.word(at + kSpecSlots);
  if (!name_ptr || !slots_ptr || *slots_ptr == 0) return std::nullopt;
  auto name = image.name_at(*name_ptr);
  if (!name) return std::nullopt;
  uint64_t methods_ptr = 0;
  for (size_t i = 0;; ++i) {
    if (i == kMaxSlots) return std::nullopt;
    auto slot = image.word(*slots_ptr + 16 * i);
    auto pfunc = image.word(*slots_ptr + 16 * i + 8);
    if (!slot || !pfunc) return std::nullopt;
    int id = static_cast<int>(*slot & 0xffffffffu);
    if (id == 0 && *pfunc == 0) break;
    if (id <= 0 || id > kLastSlotId || *pfunc == 0) return std::nullopt;
    if (id == kPyTpMethods) methods_ptr = *pfunc;
  }
  if (methods_ptr == 0) return std::nullopt;
  *type = *name;
  return method_table(image, methods_ptr);
}

}  // namespace

const std::string* PythonMethods::by_symbol(const std::string& symbol) const {
  auto it = symbols_.find(symbol);
  return it == symbols_.end() ? nullptr : &it->second;
}

const std::string* PythonMethods::by_address(uint64_t address) const {
  // The last FDE starting at or before the address, if it covers it.
  auto it = std::upper_bound(cfi_.begin(), cfi_.end(),
                             std::make_pair(address, std::numeric_limits<uint64_t>::max()));
  if (it == cfi_.begin()) return nullptr;
  --it;
  if (address >= it->second) return nullptr;
  auto named = starts_.find(it->first);
  return named == starts_.end() ? nullptr : &named->second;
}

PythonMethods read_python_methods(const ElfFile& file) {
  PythonMethods out;
  Image image(file);
  if (!image.parse() || !image.uses_python_api()) return out;
  image.load_symbols_and_relocations();
  image.load_cfi();
  if (!image.has_functions()) return out;
  // A function two tables name differently (one C function serving two
  // types) gets no name: either would be a guess.
  std::set<uint64_t> ambiguous;
  auto name_function = [&](uint64_t start, const std::string& name) {
    auto [it, added] = out.starts_.try_emplace(start, name);
    if (!added && it->second != name) ambiguous.insert(start);
  };
  // The functions that tail-call wrappers jump to, named after the table
  // scan so that a function that is itself a method keeps its own name.
  std::vector<std::pair<uint64_t, std::string>> wrapped;
  auto add = [&](const std::vector<Method>& methods, auto&& describe) {
    for (const Method& m : methods) {
      std::string name = describe(m.name);
      if (auto target = image.tail_call_target(m.address)) wrapped.emplace_back(*target, name);
      name_function(m.address, name);
    }
  };
  for (auto [start, end] : image.data_ranges()) {
    // parse() rejected segments whose end wraps, so start <= end here.
    if (start > std::numeric_limits<uint64_t>::max() - 7) continue;
    for (uint64_t at = (start + 7) & ~uint64_t{7}; at <= end && end - at >= 8; at += 8) {
      std::string_view owner;
      if (auto methods = module_methods(image, at, &owner)) {
        std::string module(owner);
        add(*methods, [&](std::string_view name) {
          return "built-in method " + module + "." + std::string(name);
        });
      } else if (auto methods = type_methods(image, at, &owner)) {
        std::string type(owner);
        add(*methods, [&](std::string_view name) {
          return "method '" + std::string(name) + "' of '" + type + "' objects";
        });
      } else if (auto methods = spec_methods(image, at, &owner)) {
        std::string type(owner);
        add(*methods, [&](std::string_view name) {
          return "method '" + std::string(name) + "' of '" + type + "' objects";
        });
      }
    }
  }
  for (uint64_t start : ambiguous) out.starts_.erase(start);
  // Tail-call targets last, and only where no table named the function and
  // every wrapper that jumps there agrees.
  std::map<uint64_t, std::string> targets;
  std::set<uint64_t> disputed;
  for (const auto& [target, name] : wrapped) {
    auto [it, added] = targets.try_emplace(target, name);
    if (!added && it->second != name) disputed.insert(target);
  }
  for (const auto& [target, name] : targets) {
    if (!ambiguous.count(target) && !disputed.count(target)) out.starts_.try_emplace(target, name);
  }
  for (const auto& [start, name] : out.starts_) {
    if (const std::string_view* symbol = image.function_at(start)) {
      out.symbols_.try_emplace(std::string(*symbol), name);
    }
  }
  out.cfi_ = image.cfi();
  return out;
}

}  // namespace strata::symbolize
