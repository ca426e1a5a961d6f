#include "symbolize/symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/process.h"
#include "symbolize/dwarf_names.h"
#include "symbolize/elf_file.h"
#include "symbolize/proc_maps.h"
#include "symbolize/symbol_index.h"
#include "symbolize/trampoline.h"

namespace strata::symbolize {
namespace {

constexpr int kCallbackAbort = DWARF_CB_ABORT;

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

bool is_file_path(const std::string& path) {
  return (!path.empty() && path[0] == '/') || path == "[vdso]";
}

// Applies mappings in order, later ones replacing what they overlap of
// earlier ones; returns them sorted and non-overlapping.
std::vector<Mapping> normalize(const std::vector<Mapping>& input) {
  std::map<uint64_t, Mapping> overlay;  // by start
  for (const Mapping& m : input) {
    if (m.end <= m.start) continue;
    auto it = overlay.lower_bound(m.start);
    if (it != overlay.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > m.start) {
        Mapping head = prev->second;
        if (head.end > m.end) {
          Mapping tail = head;
          tail.pgoff += m.end - tail.start;
          tail.start = m.end;
          overlay.emplace(tail.start, tail);
        }
        prev->second.end = m.start;
      }
    }
    it = overlay.lower_bound(m.start);
    while (it != overlay.end() && it->first < m.end) {
      Mapping piece = it->second;
      it = overlay.erase(it);
      if (piece.end > m.end) {
        piece.pgoff += m.end - piece.start;
        piece.start = m.end;
        overlay.emplace(piece.start, piece);
        break;
      }
    }
    overlay.emplace(m.start, m);
  }
  std::vector<Mapping> out;
  out.reserve(overlay.size());
  for (auto& [start, m] : overlay) out.push_back(std::move(m));
  return out;
}

// A cheap key over the mappings' addresses (word-wise; the strings are only
// compared when the key matches a Dwfl not used by this AddressSpace object).
uint64_t fingerprint(const std::vector<Mapping>& mappings) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ mappings.size();
  auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const Mapping& m : mappings) {
    mix(m.start);
    mix(m.end);
    mix(m.pgoff ^ (m.path.size() << 48) ^ (uint64_t{m.executable} << 63));
  }
  return h;
}

bool same_mappings(const std::vector<Mapping>& a, const std::vector<Mapping>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].pgoff != b[i].pgoff ||
        a[i].path != b[i].path || a[i].build_id != b[i].build_id ||
        a[i].executable != b[i].executable) {
      return false;
    }
  }
  return true;
}

const char* die_string(Dwarf_Die* die, unsigned attr) {
  Dwarf_Attribute mem;
  return dwarf_formstring(dwarf_attr_integrate(die, attr, &mem));
}

// The linkage (mangled) name of a subprogram or inlined instance, following
// DW_AT_abstract_origin / DW_AT_specification; else its plain name.
const char* die_function_name(Dwarf_Die* die) {
  const char* name = die_string(die, DW_AT_linkage_name);
  if (name == nullptr) name = die_string(die, DW_AT_MIPS_linkage_name);
  if (name == nullptr) name = die_string(die, DW_AT_name);
  return name;
}

}  // namespace

const char* unwind_stop_name(UnwindStop stop) {
  switch (stop) {
    case UnwindStop::kEnd:
      return "end";
    case UnwindStop::kMaxFrames:
      return "max_frames";
    case UnwindStop::kStackTruncated:
      return "stack_truncated";
    case UnwindStop::kNoUnwindInfo:
      return "no_unwind_info";
    case UnwindStop::kError:
      return "error";
  }
  return "error";
}

// The symbol name without an ELF symbol version ("__libc_start_main@@GLIBC_2.34",
// as libdwfl 0.188 names .dynsym entries of versioned libraries). A PLT
// stub keeps its "@plt" (symbolize/plt_stubs.h): the stub is not the function.
static std::string display_name(const char* name) {
  constexpr std::string_view kPlt = "@plt";
  std::string n(name);
  const bool stub = n.size() > kPlt.size() && n.ends_with(kPlt);
  if (stub) n.resize(n.size() - kPlt.size());
  size_t at = n.find('@');
  if (at != std::string::npos && at > 0) n.resize(at);
  return stub ? demangle(n) + std::string(kPlt) : demangle(n);
}

std::string demangle(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return name;
  }
  std::string result(out);
  std::free(out);
  return result;
}

struct Symbolizer::Impl {
  // What a reported Dwfl_Module is, reachable from its userdata slot (also
  // from the find_debuginfo callback, which gets only that slot).
  struct ModuleInfo {
    Impl* impl = nullptr;
    const ElfFile* file = nullptr;
    uint64_t bias = 0;
    std::unique_ptr<SymbolIndex> symbols;  // built at the module's first lookup
  };

  // One address space's Dwfl and the state its thread callbacks read.
  struct Session {
    Impl* impl = nullptr;
    std::vector<Mapping> input;                 // as given, for the cache key check
    std::vector<Mapping> mappings;              // normalized
    std::vector<const ElfFile*> mapping_files;  // parallel to mappings; null when none
    std::vector<std::unique_ptr<ModuleInfo>> modules;
    Dwfl_Callbacks callbacks{};
    std::string debuginfo_path;
    char* debuginfo_path_ptr = nullptr;
    Dwfl* dwfl = nullptr;
    bool attached = false;
    std::string attach_error;
    int pid = 1;
    uint64_t last_used = 0;

    // Per unwind call.
    const StackCopy* stack = nullptr;
    const PerfMap* perf_map = nullptr;
    UserRegs initial;
    std::vector<uint64_t>* pcs = nullptr;
    size_t max_frames = 0;
    bool read_past_copy = false;
    bool hit_max = false;
    std::optional<UserRegs> trampoline_regs;  // set when the walk stopped at a trampoline
    const PerfMapEntry* trampoline_entry = nullptr;
    bool trampoline_leaf = false;

    ~Session() {
      if (dwfl != nullptr) dwfl_end(dwfl);
    }

    const Mapping* mapping_at(uint64_t addr, size_t* index) const {
      auto it = std::upper_bound(mappings.begin(), mappings.end(), addr,
                                 [](uint64_t a, const Mapping& m) { return a < m.start; });
      if (it == mappings.begin()) return nullptr;
      --it;
      if (addr >= it->end) return nullptr;
      *index = static_cast<size_t>(it - mappings.begin());
      return &*it;
    }

    bool read_word(uint64_t addr, uint64_t* value) {
      if (stack != nullptr && stack->contains(addr, 8)) {
        std::memcpy(value, stack->bytes.data() + (addr - stack->sp), 8);
        return true;
      }
      if (stack != nullptr && addr >= stack->sp + stack->bytes.size() &&
          addr - stack->sp < (uint64_t{1} << 24)) {
        read_past_copy = true;  // the caller's frames lie above what was copied
      }
      size_t index = 0;
      const Mapping* m = mapping_at(addr, &index);
      if (m == nullptr || addr + 8 > m->end || mapping_files[index] == nullptr) return false;
      const ElfFile* file = mapping_files[index];
      uint64_t offset = m->pgoff + (addr - m->start);
      if (offset + 8 > file->size() || offset + 8 < offset) return false;
      std::memcpy(value, file->data() + offset, 8);
      return true;
    }
  };

  struct SymbolKey {
    const ElfFile* file;
    uint64_t address;  // in the ELF's own address space
    bool return_address;
    bool operator==(const SymbolKey&) const = default;
  };
  struct SymbolKeyHash {
    size_t operator()(const SymbolKey& k) const {
      return std::hash<uint64_t>()(k.address * 31 + k.return_address) ^
             std::hash<const void*>()(k.file);
    }
  };

  SymbolizerOptions options;
  SymbolizerStats stats;
  std::unordered_map<std::string, std::unique_ptr<ElfFile>> files;  // path \0 build id
  std::unordered_map<std::string, std::string> file_errors;
  std::unordered_multimap<uint64_t, std::unique_ptr<Session>> sessions;
  std::unordered_map<SymbolKey, std::vector<Frame>, SymbolKeyHash> symbols;
  uint64_t clock = 0;
  const AddressSpace* last_space = nullptr;
  const Mapping* last_mappings_data = nullptr;
  uint64_t last_key = 0;
  Session* last_session = nullptr;

  const ElfFile* file_for(const Mapping& m) {
    std::string key = m.path + '\0' + m.build_id;
    auto it = files.find(key);
    if (it != files.end()) return it->second.get();
    if (file_errors.count(key)) return nullptr;
    Result<std::unique_ptr<ElfFile>> opened = ElfFile::open(m.path);
    if (!opened.ok()) {
      ++stats.modules_missing;
      file_errors.emplace(key, opened.error().message);
      return nullptr;
    }
    if (!m.build_id.empty() && !opened.value()->build_id().empty() &&
        opened.value()->build_id() != m.build_id) {
      // The file was replaced since the run: its CFI and symbols would lie.
      ++stats.modules_stale;
      file_errors.emplace(key, m.path + ": build id differs from the recorded one");
      return nullptr;
    }
    const ElfFile* file = opened.value().get();
    files.emplace(key, std::move(opened.value()));
    return file;
  }

  static int find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                            const char* file_name, const char* debuglink_file,
                            GElf_Word debuglink_crc, char** debuginfo_file_name) {
    int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                          debuglink_crc, debuginfo_file_name);
    if (fd >= 0) return fd;
    auto* info = userdata != nullptr ? static_cast<ModuleInfo*>(*userdata) : nullptr;
    if (info == nullptr || info->impl->options.debug_dirs.empty()) return -1;
    const unsigned char* id = nullptr;
    GElf_Addr id_vaddr = 0;
    int id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
    std::string want = id_len > 0 ? hex_build_id(id, static_cast<size_t>(id_len)) : "";
    std::vector<std::string> names;
    std::string base_name = basename_of(file_name != nullptr ? file_name : modname);
    for (const std::string& dir : info->impl->options.debug_dirs) {
      if (want.size() > 2) {
        names.push_back(dir + "/.build-id/" + want.substr(0, 2) + "/" + want.substr(2) + ".debug");
      }
      if (debuglink_file != nullptr) {
        names.push_back(dir + "/" + debuglink_file);
        if (file_name != nullptr && file_name[0] == '/') {
          std::string d(file_name);
          names.push_back(dir + d.substr(0, d.rfind('/')) + "/" + debuglink_file);
        }
      }
      names.push_back(dir + "/" + base_name + ".debug");
    }
    for (const std::string& name : names) {
      int candidate = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
      if (candidate < 0) continue;
      bool match = want.empty();
      if (!match) {
        Elf* elf = elf_begin(candidate, ELF_C_READ_MMAP, nullptr);
        const void* got = nullptr;
        ssize_t len = elf != nullptr ? dwelf_elf_gnu_build_id(elf, &got) : -1;
        match = len > 0 && hex_build_id(got, static_cast<size_t>(len)) == want;
        if (elf != nullptr) elf_end(elf);
      }
      if (match) {
        *debuginfo_file_name = strdup(name.c_str());
        return candidate;
      }
      ::close(candidate);
    }
    return -1;
  }

  // --- libdwfl thread callbacks: one thread, registers and stack from the sample.
  static pid_t next_thread(Dwfl*, void* arg, void** thread_arg) {
    auto* s = static_cast<Session*>(arg);
    if (*thread_arg == s) return 0;  // one thread only
    *thread_arg = s;
    return s->pid;
  }
  static bool get_thread(Dwfl*, pid_t, void* arg, void** thread_arg) {
    *thread_arg = arg;
    return true;
  }
  static bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
    uint64_t value = 0;
    if (!static_cast<Session*>(arg)->read_word(addr, &value)) return false;
    *result = value;
    return true;
  }
  static bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
    const UserRegs& regs = static_cast<Session*>(arg)->initial;
    // Pass each run of consecutive valid registers. Invalid ones stay
    // undefined in libdwfl, so a CFI rule that needs one stops the unwind
    // instead of inventing a value.
    int reg = 0;
    while (reg < kNumDwarfRegs) {
      if (!regs.has(static_cast<DwarfReg>(reg))) {
        ++reg;
        continue;
      }
      int first = reg;
      while (reg < kNumDwarfRegs && regs.has(static_cast<DwarfReg>(reg))) ++reg;
      Dwarf_Word values[kNumDwarfRegs];
      for (int i = first; i < reg; ++i) values[i - first] = regs.regs[i];
      if (!dwfl_thread_state_registers(thread, first, static_cast<unsigned>(reg - first), values)) {
        return false;
      }
    }
    dwfl_thread_state_register_pc(thread, regs.ip());
    return true;
  }

  static int frame_callback(Dwfl_Frame* frame, void* arg) {
    auto* s = static_cast<Session*>(arg);
    Dwarf_Addr pc = 0;
    bool activation = false;
    if (!dwfl_frame_pc(frame, &pc, &activation)) return kCallbackAbort;
    bool leaf = s->pcs->empty();
    s->pcs->push_back(pc);
    if (s->perf_map != nullptr && !s->perf_map->empty()) {
      const PerfMapEntry* entry = s->perf_map->find(pc);
      if (entry != nullptr && trampoline_kind(*entry) != TrampolineKind::kNone) {
        // libdwfl would fall back to an rbp walk here (elfutils 0.188's
        // x86_64_unwind), which is wrong for a trampoline; stop and step over
        // it by hand.
        UserRegs regs;
        regs.set(kRip, pc);
        for (DwarfReg reg : {kRbx, kRbp, kRsp, kR12, kR13, kR14, kR15}) {
          Dwarf_Word value = 0;
          if (dwfl_frame_reg(frame, reg, &value) == 0) regs.set(reg, value);
        }
        s->trampoline_regs = regs;
        s->trampoline_entry = entry;
        s->trampoline_leaf = leaf;
        return kCallbackAbort;
      }
    }
    if (s->pcs->size() >= s->max_frames) {
      s->hit_max = true;
      return kCallbackAbort;
    }
    return DWARF_CB_OK;
  }

  Session* session_for(const AddressSpace& space) {
    uint64_t key = fingerprint(space.mappings);
    ++clock;
    // Fast path: the same AddressSpace object as last time, with the same
    // addresses (the common case: thousands of samples of one process).
    if (last_session != nullptr && last_space == &space &&
        last_mappings_data == space.mappings.data() && last_key == key) {
      last_session->last_used = clock;
      return last_session;
    }
    auto range = sessions.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) {
      if (same_mappings(it->second->input, space.mappings)) {
        it->second->last_used = clock;
        remember(space, key, it->second.get());
        return it->second.get();
      }
    }
    if (sessions.size() >= std::max<size_t>(options.max_address_spaces, 1)) {
      auto oldest = sessions.begin();
      for (auto it = sessions.begin(); it != sessions.end(); ++it) {
        if (it->second->last_used < oldest->second->last_used) oldest = it;
      }
      if (oldest->second.get() == last_session) last_session = nullptr;
      sessions.erase(oldest);
    }
    auto session = std::make_unique<Session>();
    build_session(*session, space);
    session->last_used = clock;
    Session* result = sessions.emplace(key, std::move(session))->second.get();
    remember(space, key, result);
    return result;
  }

  void remember(const AddressSpace& space, uint64_t key, Session* session) {
    last_space = &space;
    last_mappings_data = space.mappings.data();
    last_key = key;
    last_session = session;
  }

  void build_session(Session& s, const AddressSpace& space) {
    ++stats.dwfl_sessions;
    s.impl = this;
    s.pid = space.pid > 0 ? space.pid : 1;
    s.input = space.mappings;
    s.mappings = normalize(space.mappings);
    s.mapping_files.assign(s.mappings.size(), nullptr);
    // Search order: the binary's directory, its .debug/, /usr/lib/debug
    // (both also for .build-id), then the user's directories.
    s.debuginfo_path = ":.debug:/usr/lib/debug";
    for (const std::string& dir : options.debug_dirs) s.debuginfo_path += ":" + dir;
    s.debuginfo_path_ptr = s.debuginfo_path.data();
    s.callbacks.find_elf = dwfl_build_id_find_elf;
    s.callbacks.find_debuginfo = &Impl::find_debuginfo;
    s.callbacks.section_address = dwfl_offline_section_address;
    s.callbacks.debuginfo_path = &s.debuginfo_path_ptr;
    s.dwfl = dwfl_begin(&s.callbacks);
    if (s.dwfl == nullptr) {
      s.attach_error = dwfl_errmsg(-1);
      return;
    }
    // One module per (file, bias): the several mappings of one loaded file
    // (r--, r-x, rw-) share it.
    struct Group {
      const ElfFile* file;
      uint64_t bias;
      bool executable;
    };
    std::vector<Group> groups;
    for (size_t i = 0; i < s.mappings.size(); ++i) {
      const Mapping& m = s.mappings[i];
      if (!is_file_path(m.path)) continue;
      const ElfFile* file = file_for(m);
      if (file == nullptr) continue;
      s.mapping_files[i] = file;
      std::optional<uint64_t> bias =
          file->is_exec() ? std::optional<uint64_t>(0) : file->bias_for(m.start, m.pgoff);
      if (!bias) continue;
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const Group& g) { return g.file == file && g.bias == *bias; });
      if (it == groups.end()) {
        groups.push_back(Group{file, *bias, m.executable});
      } else {
        it->executable |= m.executable;
      }
    }
    dwfl_report_begin(s.dwfl);
    for (const Group& g : groups) {
      if (!g.executable) continue;  // data files mapped read-only carry no code
      int fd = g.file->open_fd();
      if (fd < 0) continue;
      Dwfl_Module* mod = dwfl_report_elf(s.dwfl, g.file->path().c_str(), g.file->path().c_str(), fd,
                                         g.bias, /*add_p_vaddr=*/true);
      if (mod == nullptr) {
        ::close(fd);
        ++stats.modules_missing;
        continue;
      }
      ++stats.modules_reported;
      auto info = std::make_unique<ModuleInfo>();
      info->impl = this;
      info->file = g.file;
      info->bias = g.bias;
      void** slot = nullptr;
      dwfl_module_info(mod, &slot, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
      if (slot != nullptr) *slot = info.get();
      s.modules.push_back(std::move(info));
    }
    dwfl_report_end(s.dwfl, nullptr, nullptr);
    static const Dwfl_Thread_Callbacks kThreadCallbacks = {
        &Impl::next_thread,           &Impl::get_thread, &Impl::memory_read,
        &Impl::set_initial_registers, nullptr,           nullptr,
    };
    if (s.modules.empty()) {
      s.attach_error = "no mapped file could be opened as ELF";
      return;
    }
    // elf == NULL: libdwfl takes the machine from the first module
    // (elfutils 0.188 dwfl_attach_state).
    s.attached = dwfl_attach_state(s.dwfl, nullptr, s.pid, &kThreadCallbacks, &s);
    if (!s.attached) s.attach_error = dwfl_errmsg(-1);
  }

  UnwindResult unwind(const AddressSpace& space, const UserRegs& regs, const StackCopy& stack,
                      size_t max_frames) {
    ++stats.unwinds;
    UnwindResult result;
    if (max_frames == 0 || !regs.has(kRip)) return result;
    if (!regs.has(kRsp)) {
      result.pcs.push_back(regs.ip());
      result.stop = UnwindStop::kError;
      result.error = "the sample has no stack pointer";
      return result;
    }
    Session* s = session_for(space);
    if (!s->attached) {
      result.pcs.push_back(regs.ip());
      result.stop = UnwindStop::kNoUnwindInfo;
      result.error = s->attach_error;
      return result;
    }
    s->stack = &stack;
    s->perf_map = &space.perf_map;
    s->pcs = &result.pcs;
    s->max_frames = max_frames;
    s->initial = regs;
    while (true) {
      s->read_past_copy = false;
      s->hit_max = false;
      s->trampoline_regs.reset();
      int rc = dwfl_getthread_frames(s->dwfl, s->pid, &Impl::frame_callback, s);
      if (s->trampoline_regs) {
        std::optional<UserRegs> caller =
            trampoline_step(*s->trampoline_entry, *s->trampoline_regs, s->trampoline_leaf,
                            [s](uint64_t addr, uint64_t* value) {
                              return s->stack->contains(addr, 8) && s->read_word(addr, value);
                            });
        if (!caller) {
          result.stop = UnwindStop::kError;
          result.error = "cannot step over perf trampoline " + s->trampoline_entry->name;
          break;
        }
        ++result.trampoline_steps;
        ++stats.trampoline_steps;
        if (result.pcs.size() >= max_frames) {
          result.stop = UnwindStop::kMaxFrames;
          break;
        }
        // Restart from the caller: its pc is a return address, which the
        // next walk reports as its first frame.
        s->initial = *caller;
        continue;
      }
      if (s->hit_max) {
        result.stop = UnwindStop::kMaxFrames;
      } else if (s->read_past_copy) {
        // libdwfl (0.188) takes an unreadable return address for the end of
        // the stack and returns 0, so the read itself tells truncation apart.
        result.stop = UnwindStop::kStackTruncated;
      } else if (rc == 0) {
        result.stop = UnwindStop::kEnd;
      } else {
        int err = dwfl_errno();
        result.error = dwfl_errmsg(err);
        uint64_t last = result.pcs.empty() ? regs.ip() : result.pcs.back();
        Dwfl_Module* mod = dwfl_addrmodule(s->dwfl, result.pcs.size() > 1 ? last - 1 : last);
        result.stop = mod == nullptr ? UnwindStop::kNoUnwindInfo : UnwindStop::kError;
      }
      break;
    }
    if (result.pcs.empty()) result.pcs.push_back(regs.ip());
    s->stack = nullptr;
    s->perf_map = nullptr;
    s->pcs = nullptr;
    return result;
  }

  std::vector<Frame> symbolize(const AddressSpace& space, uint64_t pc, bool return_address) {
    Session* s = session_for(space);
    uint64_t lookup = return_address ? pc - 1 : pc;
    Dwfl_Module* mod = s->dwfl != nullptr ? dwfl_addrmodule(s->dwfl, lookup) : nullptr;
    if (mod != nullptr) {
      void** slot = nullptr;
      Dwarf_Addr low = 0;
      dwfl_module_info(mod, &slot, &low, nullptr, nullptr, nullptr, nullptr, nullptr);
      auto* info = slot != nullptr ? static_cast<ModuleInfo*>(*slot) : nullptr;
      if (info != nullptr) {
        SymbolKey key{info->file, pc - info->bias, return_address};
        auto it = symbols.find(key);
        if (it != symbols.end()) {
          ++stats.symbol_cache_hits;
          return it->second;
        }
        ++stats.symbol_cache_misses;
        std::vector<Frame> frames = symbolize_module(mod, *info, pc, lookup);
        symbols.emplace(key, frames);
        return frames;
      }
    }
    Frame frame;
    if (const PerfMapEntry* entry = space.perf_map.find(lookup)) {
      frame.function = entry->name;
      frame.raw_function = entry->name;
      frame.module = "[perf-" + std::to_string(space.pid) + ".map]";
      frame.module_offset = pc - entry->start;
      frame.has_symbol = true;
      return {frame};
    }
    size_t index = 0;
    const Mapping* m = s->mapping_at(lookup, &index);
    if (m != nullptr && !m->path.empty()) {
      frame.module = m->path;
      frame.module_offset = m->pgoff + (pc - m->start);  // a file offset: no ELF to map it
      frame.function = basename_of(m->path) + "+" + hex(frame.module_offset);
    } else {
      frame.module_offset = pc;
      frame.function = hex(pc);
    }
    return {frame};
  }

  std::vector<Frame> symbolize_module(Dwfl_Module* mod, ModuleInfo& info, uint64_t pc,
                                      uint64_t lookup) {
    std::vector<Frame> frames;
    Frame base;
    base.module = info.file->path();
    base.module_offset = pc - info.bias;

    // The ELF symbol (.symtab, else .dynsym; from the debug file when found).
    GElf_Sym sym;
    GElf_Off sym_offset = 0;
    if (info.symbols == nullptr) info.symbols = std::make_unique<SymbolIndex>(mod);
    const char* sym_name = info.symbols->lookup(lookup, &sym_offset, &sym);
    // A sizeless symbol far before the pc says nothing (stripped binaries keep
    // a few, such as _init).
    if (sym_name != nullptr && sym.st_size == 0 && sym_offset > 0) sym_name = nullptr;

    // The innermost location, from the line table.
    const char* loc_file = nullptr;
    int loc_line = 0;
    int loc_col = 0;
    if (Dwfl_Line* line = dwfl_module_getsrc(mod, lookup)) {
      Dwarf_Addr line_addr = 0;
      loc_file = dwfl_lineinfo(line, &line_addr, &loc_line, &loc_col, nullptr, nullptr);
    }

    Dwarf_Addr dwbias = 0;
    Dwarf_Die* cudie = dwfl_module_addrdie(mod, lookup, &dwbias);
    Dwarf_Die* scopes = nullptr;
    int nscopes = cudie != nullptr ? dwarf_getscopes(cudie, lookup - dwbias, &scopes) : 0;
    Dwarf_Files* files = nullptr;
    size_t nfiles = 0;
    if (cudie != nullptr && dwarf_getsrcfiles(cudie, &files, &nfiles) != 0) files = nullptr;
    // A relative file name is relative to the compilation directory (ccache's
    // base_dir and some build systems write them so): joined, it names the
    // file wherever the report is read, so --annotate can open it.
    std::string comp_dir;
    Dwarf_Attribute comp_dir_attr;
    if (cudie != nullptr) {
      if (const char* dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &comp_dir_attr))) {
        comp_dir = dir;
      }
    }
    auto source_path = [&](const char* name) -> std::string {
      if (name == nullptr) return "";
      if (name[0] == '/' || comp_dir.empty()) return name;
      return (std::filesystem::path(comp_dir) / name).lexically_normal().string();
    };
    bool have_function = false;
    for (int i = 0; i < nscopes; ++i) {
      Dwarf_Die* scope = &scopes[i];
      int tag = dwarf_tag(scope);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
      Frame frame = base;
      frame.file = source_path(loc_file);
      frame.line = loc_line;
      frame.column = loc_col;
      int decl_line = 0;
      if (dwarf_decl_line(scope, &decl_line) == 0) frame.decl_line = decl_line;
      frame.decl_file = source_path(dwarf_decl_file(scope));
      if (tag == DW_TAG_subprogram && sym_name != nullptr) {
        frame.raw_function = sym_name;
        frame.function = display_name(sym_name);
        frame.has_symbol = true;
      } else if (std::string name = dwarf_function_name(scope); !name.empty()) {
        // Qualified as the symbol of an out-of-line copy reads, so that the
        // function has one label inlined or not (symbolize/dwarf_names.h).
        const char* linkage = die_function_name(scope);
        frame.raw_function = linkage != nullptr ? linkage : name;
        frame.function = std::move(name);
        frame.has_symbol = true;
      } else {
        // A scope without a name (damaged or unusual debug information):
        // the address, as for a pc without a symbol, never an empty name.
        frame.function = basename_of(info.file->path()) + "+" + hex(base.module_offset);
      }
      if (tag == DW_TAG_inlined_subroutine) {
        frame.inlined = true;
        frames.push_back(std::move(frame));
        // The caller's location is the call site of this inlined instance.
        Dwarf_Attribute attr;
        Dwarf_Word value = 0;
        loc_file = nullptr;
        if (files != nullptr &&
            dwarf_formudata(dwarf_attr(scope, DW_AT_call_file, &attr), &value) == 0) {
          if (value < nfiles) loc_file = dwarf_filesrc(files, value, nullptr, nullptr);
        }
        loc_line = dwarf_formudata(dwarf_attr(scope, DW_AT_call_line, &attr), &value) == 0
                       ? static_cast<int>(value)
                       : 0;
        loc_col = dwarf_formudata(dwarf_attr(scope, DW_AT_call_column, &attr), &value) == 0
                      ? static_cast<int>(value)
                      : 0;
        continue;
      }
      frames.push_back(std::move(frame));
      have_function = true;
      break;
    }
    std::free(scopes);
    if (!have_function) {
      // No DWARF scope: the symbol alone, with what the line table knew.
      Frame frame = base;
      frame.file = source_path(loc_file);
      frame.line = loc_line;
      frame.column = loc_col;
      if (sym_name != nullptr) {
        frame.raw_function = sym_name;
        frame.function = display_name(sym_name);
        frame.has_symbol = true;
      } else {
        frame.function = basename_of(info.file->path()) + "+" + hex(base.module_offset);
      }
      frames.push_back(std::move(frame));
    }
    return frames;
  }
};

Symbolizer::Symbolizer(SymbolizerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

Symbolizer::~Symbolizer() = default;

UnwindResult Symbolizer::unwind(const AddressSpace& space, const UserRegs& regs,
                                const StackCopy& stack, size_t max_frames) {
  return impl_->unwind(space, regs, stack, max_frames);
}

std::vector<Frame> Symbolizer::symbolize(const AddressSpace& space, uint64_t pc,
                                         bool return_address) {
  return impl_->symbolize(space, pc, return_address);
}

std::vector<std::vector<Frame>> Symbolizer::symbolize_stack(const AddressSpace& space,
                                                            std::span<const uint64_t> pcs) {
  std::vector<std::vector<Frame>> out;
  out.reserve(pcs.size());
  for (size_t i = 0; i < pcs.size(); ++i) out.push_back(symbolize(space, pcs[i], i > 0));
  return out;
}

const SymbolizerStats& Symbolizer::stats() const {
  return impl_->stats;
}

Result<AddressSpace> read_proc_maps(int pid) {
  std::string name = pid == 0 ? "self" : std::to_string(pid);
  std::string path = "/proc/" + name + "/maps";
  const std::optional<std::string> text = read_proc_text(path);
  if (!text) return make_error("cannot read " + path);
  AddressSpace space = address_space_from_maps(pid == 0 ? static_cast<int>(getpid()) : pid, *text);
  // Only the process's own map: /tmp is everyone's (PerfMap::read_owned_file).
  if (std::optional<uint32_t> uid = process_fs_uid(space.pid)) {
    Result<PerfMap> perf_map =
        PerfMap::read_owned_file("/tmp/perf-" + std::to_string(space.pid) + ".map", *uid);
    if (perf_map.ok()) space.perf_map = std::move(perf_map.value());
  }
  return space;
}

}  // namespace strata::symbolize
