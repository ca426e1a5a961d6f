#include "sampler/python_stack.h"

#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace strata::sampler {
namespace {

// offsetof() against each version's headers (see the header).
constexpr PythonLayout kPython38 = {
    .minor = 8,
    .runtime_interpreters_head = 32,
    .interp_next = 0,
    .interp_threads_head = 8,
    .tstate_next = 8,
    .tstate_thread_id = 176,
    .tstate_frame = 24,
    .frame_back = 24,
    .frame_code = 32,
    .frame_lasti = 104,
    .frame_size = 112,
    .code_firstlineno = 40,
    .code_filename = 104,
    .code_name = 112,
    .code_linetable = 120,
    .code_size = 128,
    .ascii_data = 48,
    .compact_data = 72,
};
constexpr PythonLayout kPython39 = [] {
  PythonLayout l = kPython38;
  l.minor = 9;
  return l;
}();
constexpr PythonLayout kPython310 = [] {
  PythonLayout l = kPython38;
  l.minor = 10;
  l.frame_lasti = 96;  // f_lineno and f_lasti moved up; co_linetable replaced co_lnotab
  l.frame_size = 104;
  return l;
}();
constexpr PythonLayout kPython311 = {
    .minor = 11,
    .runtime_interpreters_head = 40,
    .interp_next = 0,
    .interp_threads_head = 16,
    .tstate_next = 8,
    .tstate_thread_id = 152,
    .tstate_native_thread_id = 160,
    .tstate_cframe = 56,
    .cframe_current_frame = 8,
    .frame_back = 48,  // _PyInterpreterFrame.previous
    .frame_code = 32,
    .frame_instr = 56,
    .frame_is_entry = 68,
    .frame_size = 72,
    .code_firstlineno = 72,
    .code_filename = 112,
    .code_name = 120,
    .code_qualname = 128,
    .code_linetable = 136,
    .code_adaptive = 184,
    .code_size = 192,
    .ascii_data = 48,
    .compact_data = 72,
};
constexpr PythonLayout kPython312 = {
    .minor = 12,
    .runtime_interpreters_head = 40,
    .interp_next = 0,
    .interp_threads_head = 72,
    .tstate_next = 8,
    .tstate_thread_id = 136,
    .tstate_native_thread_id = 144,
    .tstate_cframe = 56,
    .cframe_current_frame = 0,
    .frame_back = 8,
    .frame_code = 0,
    .frame_instr = 56,
    .frame_owner = 70,
    .frame_size = 72,
    .code_firstlineno = 68,
    .code_filename = 112,
    .code_name = 120,
    .code_qualname = 128,
    .code_linetable = 136,
    .code_adaptive = 192,
    .code_size = 200,
    .ascii_data = 40,
    .compact_data = 56,
};
// 3.13 also publishes these in _PyRuntime.debug_offsets (for debuggers);
// tests/cli/cpu_cli_test.cc checks the ones it has against a live 3.13.
constexpr PythonLayout kPython313 = [] {
  PythonLayout l = kPython312;
  l.minor = 13;
  l.runtime_interpreters_head = 632;
  l.interp_next = 7264;  // after the eval state, which grew pending-call queues
  l.interp_threads_head = 7344;
  l.tstate_thread_id = 152;
  l.tstate_native_thread_id = 160;
  l.tstate_cframe = 0;
  l.cframe_current_frame = 0;
  l.tstate_current_frame = 72;
  l.code_adaptive = 200;
  l.code_size = 208;
  return l;
}();

// Object headers, the same in 3.8-3.13: ob_refcnt, ob_type; then
// PyVarObject.ob_size; PyBytesObject.ob_sval; PyASCIIObject's length and
// state (whose kind, compact and ascii bits stayed put).
constexpr uint64_t kObType = 8;
constexpr uint64_t kTypeName = 24;  // PyTypeObject.tp_name
constexpr uint64_t kVarSize = 16;
constexpr uint64_t kBytesData = 32;
constexpr uint64_t kUnicodeLength = 16;
constexpr uint64_t kUnicodeState = 32;
constexpr uint64_t kLargestUnicodeHeader = 72;  // 3.8-3.11's PyCompactUnicodeObject

template <class T>
T field(const uint8_t* block, uint32_t offset) {
  T value;
  std::memcpy(&value, block + offset, sizeof value);
  return value;
}

template <class T>
bool read_value(RemoteMemory& memory, uint64_t address, T* out) {
  return memory.read(address, out, sizeof *out);
}

// Plausible user-space object address: non-null, aligned, below the
// canonical x86-64 user limit.
bool plausible(uint64_t address) {
  return address >= 4096 && address % 8 == 0 && address < (1ull << 47);
}

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x110000) {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += '?';
  }
}

// 3.8, 3.9: co_lnotab, pairs (bytecode delta, signed line delta); the line
// of the last pair whose address is not past `offset` (PyCode_Addr2Line).
int lnotab_line(const std::vector<uint8_t>& table, int first_line, int64_t offset) {
  int64_t line = first_line;  // 64 bits: untrusted deltas cannot overflow it
  int64_t address = 0;
  for (size_t i = 0; i + 1 < table.size(); i += 2) {
    address += table[i];
    if (address > offset) break;
    line += static_cast<int8_t>(table[i + 1]);
  }
  return line < 0 || line > (1 << 30) ? -1 : static_cast<int>(line);
}

// 3.10: co_linetable, pairs (bytecode delta, signed line delta) that each
// end a range; a line delta of -128 means the range has no line.
int linetable310_line(const std::vector<uint8_t>& table, int first_line, int64_t offset) {
  int64_t line = first_line;
  int64_t end = 0;
  for (size_t i = 0; i + 1 < table.size(); i += 2) {
    const int64_t start = end;
    end += table[i];
    const int8_t delta = static_cast<int8_t>(table[i + 1]);
    int range_line = -1;
    if (delta != -128) {
      line += delta;
      if (line >= 0 && line <= (1 << 30)) range_line = static_cast<int>(line);
    }
    if (offset >= start && offset < end) return range_line;
  }
  return -1;
}

// 3.11: the location table (Objects/locations.md): entries that start with a
// byte whose top bit is set, code = bits 3-6, length in code units = bits
// 0-2 plus one, then varints whose bytes carry 6 bits and 0x40 for "more".
class LocationCursor {
 public:
  explicit LocationCursor(const std::vector<uint8_t>& table) : t_(table) {}
  bool at_end() const { return at_ >= t_.size(); }
  uint8_t byte() { return at_ < t_.size() ? t_[at_++] : 0; }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 60; shift += 6) {
      const uint8_t b = byte();
      value |= static_cast<uint64_t>(b & 63) << shift;
      if (!(b & 64)) break;
    }
    return value;
  }
  int64_t svarint() {
    const uint64_t v = varint();
    return (v & 1) ? -static_cast<int64_t>(v >> 1) : static_cast<int64_t>(v >> 1);
  }

 private:
  const std::vector<uint8_t>& t_;
  size_t at_ = 0;
};

int locations311_line(const std::vector<uint8_t>& table, int first_line, int64_t offset) {
  if (offset < 0) return first_line;
  LocationCursor cursor(table);
  int64_t line = first_line;
  int64_t end = 0;  // bytes
  while (!cursor.at_end()) {
    const uint8_t first = cursor.byte();
    if (!(first & 0x80)) return -1;  // not the start of an entry: damaged
    const int code = (first >> 3) & 15;
    const int64_t start = end;
    end += 2 * ((first & 7) + 1);
    bool has_line = true;
    if (code == 15) {  // no location
      has_line = false;
    } else if (code == 14) {  // long form: line delta, end line delta, column, end column
      line += cursor.svarint();
      cursor.varint();
      cursor.varint();
      cursor.varint();
    } else if (code == 13) {  // no column
      line += cursor.svarint();
    } else if (code >= 10) {  // one-line form: delta code-10, column, end column
      line += code - 10;
      cursor.byte();
      cursor.byte();
    } else {  // short form: same line, one column byte
      cursor.byte();
    }
    if (line < 0 || line > (1 << 30)) return -1;
    if (offset >= start && offset < end) return has_line ? static_cast<int>(line) : -1;
  }
  return -1;
}

}  // namespace

const PythonLayout* python_layout(int major, int minor) {
  if (major != 3) return nullptr;
  switch (minor) {
    case 8:
      return &kPython38;
    case 9:
      return &kPython39;
    case 10:
      return &kPython310;
    case 11:
      return &kPython311;
    case 12:
      return &kPython312;
    case 13:
      return &kPython313;
    default:
      return nullptr;
  }
}

const char* python_layouts_known() {
  return "3.8-3.13";
}

bool ProcessMemory::read_exact(uint64_t address, void* out, size_t len) {
  iovec local{out, len};
  iovec remote{reinterpret_cast<void*>(address), len};
  ++syscalls_;
  const ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(len)) return true;
  last_errno_ = n < 0 ? errno : EFAULT;
  return false;
}

void ProcessMemory::new_snapshot() {
  page_index_.clear();
  pages_used_ = 0;
}

const uint8_t* ProcessMemory::page(uint64_t page_address) {
  auto cached = page_index_.find(page_address);
  if (cached != page_index_.end()) return pages_[cached->second].data();
  if (pages_used_ == kMaxCachedPages) new_snapshot();
  if (pages_used_ == pages_.size()) pages_.emplace_back();
  uint8_t* slot = pages_[pages_used_].data();
  // Mappings are whole pages: the page of a readable byte reads whole.
  if (!read_exact(page_address, slot, kPage)) return nullptr;
  page_index_[page_address] = pages_used_++;
  return slot;
}

bool ProcessMemory::read(uint64_t address, void* out, size_t len) {
  if (len == 0) return true;
  if (address > UINT64_MAX - len) return false;
  const uint64_t first = address & ~(kPage - 1);
  const uint64_t last = (address + len - 1) & ~(kPage - 1);
  // A long read (a line table) is one call of its own.
  if (last - first >= 2 * kPage) return read_exact(address, out, len);
  auto* to = static_cast<uint8_t*>(out);
  for (uint64_t at = address; at < address + len;) {
    const uint64_t page_address = at & ~(kPage - 1);
    const uint8_t* bytes = page(page_address);
    if (bytes == nullptr) return false;
    const size_t n = std::min<uint64_t>(page_address + kPage, address + len) - at;
    std::memcpy(to + (at - address), bytes + (at - page_address), n);
    at += n;
  }
  return true;
}

int python_line_for_offset(int minor, const std::vector<uint8_t>& table, int first_line,
                           int64_t offset) {
  if (minor <= 9) return offset < 0 ? first_line : lnotab_line(table, first_line, offset);
  if (minor == 10) return offset < 0 ? first_line : linetable310_line(table, first_line, offset);
  return locations311_line(table, first_line, offset);
}

std::optional<uint32_t> pthread_tid_offset() {
  // struct pthread starts with the TCB; glibc 2.28-2.40 keep `tid` at 0x2d0
  // on x86-64. Searching our own rather than trusting that number follows
  // glibc if it moves the field.
  const pid_t tid = gettid();
  const auto* self = reinterpret_cast<const uint8_t*>(pthread_self());
  constexpr uint32_t kSearch = 2048;
  for (uint32_t off = 16; off + sizeof(pid_t) <= kSearch; off += sizeof(pid_t)) {
    pid_t value;
    std::memcpy(&value, self + off, sizeof value);
    if (value == tid) return off;
  }
  return std::nullopt;
}

PythonStackReader::PythonStackReader(const PythonLayout& layout, uint64_t runtime_address,
                                     std::optional<uint32_t> tid_offset)
    : layout_(layout), runtime_(runtime_address), tid_offset_(tid_offset) {}

bool PythonStackReader::thread_state_is(RemoteMemory& memory, uint64_t tstate, uint32_t tid) {
  if (layout_.tstate_native_thread_id != 0) {
    uint64_t native = 0;
    return read_value(memory, tstate + layout_.tstate_native_thread_id, &native) && native == tid;
  }
  if (!tid_offset_) return false;
  uint64_t pthread = 0;
  if (!read_value(memory, tstate + layout_.tstate_thread_id, &pthread) || !plausible(pthread)) {
    return false;
  }
  int32_t value = 0;
  return read_value(memory, pthread + *tid_offset_, &value) && static_cast<uint32_t>(value) == tid;
}

std::optional<uint64_t> PythonStackReader::find_thread_state(RemoteMemory& memory, uint32_t tid) {
  auto cached = thread_states_.find(tid);
  if (cached != thread_states_.end()) {
    if (thread_state_is(memory, cached->second, tid)) return cached->second;
    thread_states_.erase(cached);
  }
  uint64_t interp = 0;
  if (!read_value(memory, runtime_ + layout_.runtime_interpreters_head, &interp)) {
    return std::nullopt;
  }
  for (size_t i = 0; i < kMaxInterpreters && plausible(interp); ++i) {
    uint64_t tstate = 0;
    if (!read_value(memory, interp + layout_.interp_threads_head, &tstate)) break;
    for (size_t n = 0; n < kMaxThreads && plausible(tstate); ++n) {
      if (thread_state_is(memory, tstate, tid)) {
        thread_states_[tid] = tstate;
        return tstate;
      }
      if (!read_value(memory, tstate + layout_.tstate_next, &tstate)) break;
    }
    if (!read_value(memory, interp + layout_.interp_next, &interp)) break;
  }
  return std::nullopt;
}

std::optional<std::string> PythonStackReader::read_string(RemoteMemory& memory, uint64_t unicode) {
  if (!plausible(unicode)) return std::nullopt;
  uint8_t header[kLargestUnicodeHeader] = {};
  if (!memory.read(unicode, header, layout_.compact_data)) {
    // A short ASCII string can end its allocation before the compact header would.
    if (!memory.read(unicode, header, layout_.ascii_data)) return std::nullopt;
  }
  const int64_t length = field<int64_t>(header, kUnicodeLength);
  const uint32_t state = field<uint32_t>(header, kUnicodeState);
  const uint32_t kind = (state >> 2) & 7;
  const bool compact = (state >> 5) & 1;
  const bool ascii = (state >> 6) & 1;
  if (length < 0 || !compact || (kind != 1 && kind != 2 && kind != 4)) return std::nullopt;
  const size_t count = static_cast<size_t>(std::min<int64_t>(length, kMaxString));
  std::vector<uint8_t> data(count * kind);
  const uint64_t at = unicode + (ascii ? layout_.ascii_data : layout_.compact_data);
  if (count > 0 && !memory.read(at, data.data(), data.size())) return std::nullopt;
  std::string out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t c = 0;
    if (kind == 1) c = data[i];
    if (kind == 2) c = field<uint16_t>(data.data(), static_cast<uint32_t>(i * 2));
    if (kind == 4) c = field<uint32_t>(data.data(), static_cast<uint32_t>(i * 4));
    append_utf8(out, c);
  }
  if (static_cast<size_t>(length) > count) out += "...";
  return out;
}

std::optional<uint32_t> PythonStackReader::code_index(RemoteMemory& memory, uint64_t code) {
  if (!plausible(code)) return std::nullopt;
  std::vector<uint8_t>& block = code_block_;
  block.resize(layout_.code_size);
  if (!memory.read(code, block.data(), block.size())) return std::nullopt;
  // A code object freed and another allocated at its address (a module's
  // <module> code after it ran) must not keep the old name: the cache is
  // checked against the fields that name it.
  const CodeFingerprint fingerprint = {
      field<uint64_t>(block.data(), layout_.code_name),
      field<uint64_t>(block.data(),
                      layout_.code_qualname ? layout_.code_qualname : layout_.code_name),
      field<uint64_t>(block.data(), layout_.code_filename),
      field<uint64_t>(block.data(), layout_.code_linetable),
      field<uint32_t>(block.data(), layout_.code_firstlineno)};
  auto cached = code_indexes_.find(code);
  if (cached != code_indexes_.end() && fingerprints_[cached->second] == fingerprint) {
    return cached->second;
  }
  // A code object's type is named "code": a pointer to anything else is not one.
  uint64_t type = field<uint64_t>(block.data(), kObType);
  uint64_t type_name = 0;
  char name[5] = {};
  if (!plausible(type) || !read_value(memory, type + kTypeName, &type_name) || type_name == 0 ||
      !memory.read(type_name, name, sizeof name) || std::memcmp(name, "code", 5) != 0) {
    return std::nullopt;
  }
  PythonCode info;
  const uint32_t name_field = layout_.code_qualname ? layout_.code_qualname : layout_.code_name;
  auto function = read_string(memory, field<uint64_t>(block.data(), name_field));
  auto file = read_string(memory, field<uint64_t>(block.data(), layout_.code_filename));
  if (!function) return std::nullopt;
  info.name = std::move(*function);
  info.file = file.value_or("");
  info.first_line = field<int32_t>(block.data(), layout_.code_firstlineno);
  if (info.first_line < 0 || info.first_line > (1 << 30)) info.first_line = 0;
  std::vector<uint8_t> table;
  const uint64_t bytes = field<uint64_t>(block.data(), layout_.code_linetable);
  int64_t size = 0;
  if (plausible(bytes) && read_value(memory, bytes + kVarSize, &size) && size > 0) {
    table.resize(static_cast<size_t>(std::min<int64_t>(size, kMaxLineTable)));
    if (!memory.read(bytes + kBytesData, table.data(), table.size())) table.clear();
  }
  const auto index = static_cast<uint32_t>(codes_.size());
  codes_.push_back(std::move(info));
  line_tables_.push_back(std::move(table));
  fingerprints_.push_back(fingerprint);
  code_indexes_[code] = index;
  return index;
}

int PythonStackReader::line_of(uint32_t code, int64_t offset) const {
  const int line =
      python_line_for_offset(layout_.minor, line_tables_[code], codes_[code].first_line, offset);
  return line > 0 ? line : 0;
}

PythonReadResult PythonStackReader::read(RemoteMemory& memory, uint32_t tid,
                                         std::vector<PythonFrameRead>* out) {
  out->clear();
  auto tstate = find_thread_state(memory, tid);
  if (!tstate) return PythonReadResult::kNoThread;
  auto frame = current_frame(memory, *tstate);
  if (!frame) return PythonReadResult::kReadFailed;
  std::vector<uint8_t> block(layout_.frame_size);
  // Entry frames of 3.12+ count as steps too: a chain of nothing else is bounded.
  for (size_t step = 0; *frame != 0; ++step) {
    if (out->size() >= kMaxFrames || step >= 2 * kMaxFrames || !plausible(*frame) ||
        !memory.read(*frame, block.data(), block.size())) {
      // A chain longer than any real one is a cycle or garbage; a frame that
      // cannot be read was freed under us: either way the stack is not whole.
      out->clear();
      return PythonReadResult::kReadFailed;
    }
    *frame = field<uint64_t>(block.data(), layout_.frame_back);
    if (layout_.frame_owner != 0 && block[layout_.frame_owner] == kFrameOwnedByCStack) {
      // The eval loop's entry frame: the frame read before it began a C-level call.
      if (!out->empty()) out->back().entry = true;
      continue;
    }
    const uint64_t code = field<uint64_t>(block.data(), layout_.frame_code);
    auto index = code_index(memory, code);
    if (!index) {
      out->clear();
      return PythonReadResult::kReadFailed;
    }
    PythonFrameRead f;
    f.code = *index;
    int64_t offset = 0;
    if (layout_.frame_instr != 0) {
      const uint64_t instr = field<uint64_t>(block.data(), layout_.frame_instr);
      offset = static_cast<int64_t>(instr - (code + layout_.code_adaptive));
      if (layout_.frame_is_entry != 0) f.entry = block[layout_.frame_is_entry] != 0;
      if (layout_.frame_owner != 0) f.entry = false;  // until its entry frame shows
    } else {
      offset = field<int32_t>(block.data(), layout_.frame_lasti);
      if (layout_.minor == 10 && offset > 0) offset *= 2;  // 3.10 counts code units
    }
    f.line = line_of(*index, offset);
    out->push_back(f);
  }
  return PythonReadResult::kOk;
}

std::optional<uint64_t> PythonStackReader::current_frame(RemoteMemory& memory, uint64_t tstate) {
  uint64_t frame = 0;
  if (layout_.tstate_cframe != 0) {
    uint64_t cframe = 0;
    if (!read_value(memory, tstate + layout_.tstate_cframe, &cframe)) return std::nullopt;
    if (cframe == 0) return uint64_t{0};
    if (!plausible(cframe) || !read_value(memory, cframe + layout_.cframe_current_frame, &frame)) {
      return std::nullopt;
    }
    return frame;
  }
  const uint32_t field_offset =
      layout_.tstate_current_frame != 0 ? layout_.tstate_current_frame : layout_.tstate_frame;
  if (!read_value(memory, tstate + field_offset, &frame)) return std::nullopt;
  return frame;
}

}  // namespace strata::sampler
