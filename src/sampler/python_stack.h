// Reading a CPython 3.8-3.13 interpreter's Python stack from outside the
// process, py-spy's method: from the interpreter's _PyRuntime global, walk
// interpreters -> thread states, pick the sampled thread, then follow its
// frame chain and read each frame's code object (name, file, line table).
// CPython >= 3.12 also names its functions in perf maps (symbolize/
// perf_map.h), but those carry no lines and need the native stack whole;
// the frames read here have both, and are what the profile keeps where the
// two agree (import/cpu/build_profile.cc).
//
// Every byte comes from the target's memory, which the target changes while
// it is read and which a bug (or a hostile program) can fill with anything:
// pointers are followed a bounded number of times, strings and tables are
// read to bounded sizes, and a cycle or a read that fails ends the walk with
// what was read so far. tests/sampler/python_stack_test.cc mutates images.
//
// The layouts are x86-64 CPython built without Py_DEBUG (every distribution's
// and pyenv's build); offsets were taken with offsetof() against each
// version's own headers (Include/internal: _PyRuntimeState, PyThreadState,
// PyFrameObject or _PyInterpreterFrame, PyCodeObject) and hold for every
// patch release of a minor version.
//
// Threading: a PythonStackReader is used by one thread (it caches).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata::sampler {

// The offsets one minor version needs; 0 for a field it does not have.
struct PythonLayout {
  int minor = 0;  // 3.minor
  // _PyRuntimeState
  uint32_t runtime_interpreters_head = 0;
  // PyInterpreterState
  uint32_t interp_next = 0;
  uint32_t interp_threads_head = 0;
  // PyThreadState
  uint32_t tstate_next = 0;
  uint32_t tstate_thread_id = 0;         // pthread_self() of the thread
  uint32_t tstate_native_thread_id = 0;  // 3.11+: the kernel tid
  uint32_t tstate_frame = 0;             // 3.8-3.10: PyFrameObject*
  uint32_t tstate_cframe = 0;            // 3.11, 3.12: _PyCFrame*
  uint32_t cframe_current_frame = 0;     // 3.11, 3.12: _PyInterpreterFrame*
  uint32_t tstate_current_frame = 0;     // 3.13: _PyInterpreterFrame*, no _PyCFrame between
  // The frame (PyFrameObject before 3.11, then _PyInterpreterFrame)
  uint32_t frame_back = 0;
  uint32_t frame_code = 0;   // f_code; 3.13's f_executable (a code object in Python frames)
  uint32_t frame_lasti = 0;  // 3.8-3.10: int, bytes (3.8, 3.9) or code units (3.10)
  // 3.11+: _Py_CODEUNIT* of the instruction executing (prev_instr in 3.11
  // and 3.12, instr_ptr in 3.13: renamed, the same instruction)
  uint32_t frame_instr = 0;
  uint32_t frame_is_entry = 0;  // 3.11: bool, the first frame of one C-level eval call
  // 3.12+: char, who owns the frame; the eval loop's own entry frame (a
  // shim, owned by the C stack) sits under the first frame of each C-level
  // eval call, which 3.11 marked with is_entry.
  uint32_t frame_owner = 0;
  uint32_t frame_size = 0;  // bytes read per frame
  // PyCodeObject
  uint32_t code_firstlineno = 0;
  uint32_t code_filename = 0;
  uint32_t code_name = 0;
  uint32_t code_qualname = 0;   // 3.11+
  uint32_t code_linetable = 0;  // co_lnotab (3.8, 3.9), co_linetable (3.10+)
  uint32_t code_adaptive = 0;   // 3.11+: co_code_adaptive, the bytecode inline
  uint32_t code_size = 0;       // bytes read per code object
  // str: where a compact string's characters start, after sizeof
  // PyASCIIObject (ASCII) or sizeof PyCompactUnicodeObject (others); 3.12
  // dropped their wstr fields.
  uint32_t ascii_data = 0;
  uint32_t compact_data = 0;
};

// The layout of CPython 3.minor; nullptr for a version this reader does not know.
const PythonLayout* python_layout(int major, int minor);

// The versions python_layout knows, for messages ("3.8-3.13").
const char* python_layouts_known();

// _PyInterpreterFrame.owner of the eval loop's entry frames (3.12+).
inline constexpr uint8_t kFrameOwnedByCStack = 3;

// Where memory is read from: the target (process_vm_readv) or, in tests, an image.
class RemoteMemory {
 public:
  virtual ~RemoteMemory() = default;
  // All `len` bytes at `address`, or false.
  virtual bool read(uint64_t address, void* out, size_t len) = 0;
};

// The memory of a live process. read() fails (errno kept in last_errno) when
// the process is gone, the address unmapped, or reading refused (ptrace
// access: same uid and no Yama restriction, or CAP_SYS_PTRACE).
//
// process_vm_readv costs microseconds a call whatever the size (it pins the
// target's pages), and one Python stack is a few hundred small reads of
// frames that sit together (3.11+ keep them in one data stack) and code
// objects that repeat: reads go through whole pages, each page read once
// per snapshot. new_snapshot() forgets them, before each sample's stack,
// since the target runs on between samples.
class ProcessMemory : public RemoteMemory {
 public:
  static constexpr uint64_t kPage = 4096;
  static constexpr size_t kMaxCachedPages = 256;  // a snapshot past this starts over

  explicit ProcessMemory(pid_t pid) : pid_(pid) {}
  bool read(uint64_t address, void* out, size_t len) override;
  void new_snapshot();
  int last_errno() const { return last_errno_; }
  uint64_t syscalls() const { return syscalls_; }  // process_vm_readv calls so far

 private:
  bool read_exact(uint64_t address, void* out, size_t len);
  const uint8_t* page(uint64_t page_address);

  pid_t pid_;
  int last_errno_ = 0;
  uint64_t syscalls_ = 0;
  std::map<uint64_t, size_t> page_index_;  // page address -> slot in pages_
  std::vector<std::array<uint8_t, kPage>> pages_;
  size_t pages_used_ = 0;
};

// Line number of the instruction at byte offset `offset` of a code object,
// from its line table as each version encodes it (Objects/lnotab_notes.txt);
// -1 when the table gives none. The table is untrusted: any bytes give an
// answer or -1.
int python_line_for_offset(int minor, const std::vector<uint8_t>& table, int first_line,
                           int64_t offset);

// The offset of the kernel tid inside glibc's struct pthread (what
// pthread_self() points at), found in this process's own; the target uses
// the same libc. nullopt where it cannot be found.
std::optional<uint32_t> pthread_tid_offset();

struct PythonCode {
  std::string name;  // co_qualname (3.11+) or co_name
  std::string file;  // co_filename
  int first_line = 0;
};

struct PythonFrameRead {
  uint32_t code = 0;  // index into PythonStackReader::codes()
  int32_t line = 0;   // the line executing; 0 when unknown
  bool entry = true;  // 3.11+: the first frame of a C-level eval call (always true before)
};

enum class PythonReadResult {
  kOk,          // frames read (possibly none: the thread runs no Python code now)
  kNoThread,    // the thread holds no Python thread state (a native thread) or none is set up yet
  kReadFailed,  // memory could not be read (errno in ProcessMemory) or made no sense
};

// Reads one process's Python stacks. Code objects are read in full once per
// address and kept; each later frame rereads only the code object's header
// to check that the same object (same name, file, line table) is still there.
class PythonStackReader {
 public:
  // Bounds on what untrusted memory can make the reader do.
  static constexpr size_t kMaxFrames = 512;
  static constexpr size_t kMaxThreads = 4096;
  static constexpr size_t kMaxInterpreters = 64;
  static constexpr size_t kMaxString = 1024;
  static constexpr size_t kMaxLineTable = 1 << 16;

  // `tid_offset`: pthread_tid_offset(), needed before 3.11.
  PythonStackReader(const PythonLayout& layout, uint64_t runtime_address,
                    std::optional<uint32_t> tid_offset);

  // The Python frames of thread `tid`, leaf first, into `out`.
  PythonReadResult read(RemoteMemory& memory, uint32_t tid, std::vector<PythonFrameRead>* out);

  const std::vector<PythonCode>& codes() const { return codes_; }
  int minor() const { return layout_.minor; }

 private:
  std::optional<uint64_t> find_thread_state(RemoteMemory& memory, uint32_t tid);
  // The thread's innermost frame (0: it runs no Python now); nullopt when unreadable.
  std::optional<uint64_t> current_frame(RemoteMemory& memory, uint64_t tstate);
  bool thread_state_is(RemoteMemory& memory, uint64_t tstate, uint32_t tid);
  std::optional<uint32_t> code_index(RemoteMemory& memory, uint64_t code);
  std::optional<std::string> read_string(RemoteMemory& memory, uint64_t unicode);
  int line_of(uint32_t code, int64_t offset) const;

  PythonLayout layout_;
  uint64_t runtime_;
  std::optional<uint32_t> tid_offset_;
  std::map<uint32_t, uint64_t> thread_states_;  // tid -> PyThreadState*, checked on use
  // name, qualname, filename, line table pointers and first line of a code object
  using CodeFingerprint = std::array<uint64_t, 5>;
  std::map<uint64_t, uint32_t> code_indexes_;  // code object address -> codes_ index
  std::vector<PythonCode> codes_;
  std::vector<std::vector<uint8_t>> line_tables_;  // parallel to codes_
  std::vector<CodeFingerprint> fingerprints_;      // parallel to codes_
  std::vector<uint8_t> code_block_;                // scratch
};

}  // namespace strata::sampler
