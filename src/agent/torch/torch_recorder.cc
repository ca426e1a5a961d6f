// libstrata_torch.so: every PyTorch op torch's profiler would see (aten ops,
// autograd nodes, record_function scopes, optimizer steps), recorded by four
// global RecordFunction callbacks registered in the libtorch_cpu.so the
// program loaded (at::addGlobalCallback, found by dlsym: Kineto's own
// mechanism, without Kineto). docs/torch-ops.md says how it is driven (the
// Python hook src/agent/torch/python/sitecustomize.py) and what it costs.
//
// Per op: its start (at the start callback) and end (at the end callback) on
// the op's own thread, read from CLOCK_MONOTONIC, the depth (ops open on the
// thread), the autograd sequence number (read at an offset probed at run
// time), the scope (each callback covers a disjoint set of scopes, so the
// scope is known without reading the object), an id unique in the process,
// and optionally input shapes and the Python caller.
//
// The link to kernels: the CUDA agent puts CUPTI's timestamps on
// CLOCK_MONOTONIC too, so on one thread an op's start, the start of each CUDA
// call it makes and its end are three reads of one clock in program order,
// and the import links each call to the innermost op open around it
// (import/torch_op_links.h): the answer CUPTI's external correlation gives,
// without two CUPTI calls per op (about 0.42 us per op on the H100,
// docs/PERFORMANCE.md). A clock read costs ~15 ns more than the TSC: the
// price of an order that holds by construction (a TSC mapped afterwards
// would follow NTP's slewing only on average). Only where the agent keeps
// CUPTI's own clock (STRATA_AGENT_CLOCK=cupti) does it attach its push and
// pop, and each op pushes its id as the external correlation id.
//
// Threading: a thread writes only its own buffer on the hot path. Open ops
// live on a per-thread stack; an op enters the thread's buffer of finished
// records at its end, and full buffers go to the spool (torch-PID.bin) as one
// torch-ops chunk. Names are interned per process under a mutex (only on a
// miss of the thread's cache), and each new string's chunk is written before
// any record naming it can be. Exit, fatal-signal and fork paths follow
// instrument.cc: stop, wait for flushes in flight, write every thread's
// finished ops and its still-open ones (kTorchOpUnfinished, end = now).
// Nothing here throws into the target; failures become a torch-status line.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/torch/python_stack.h"
#include "agent/torch/torch_abi.h"
#include "common/clock.h"
#include "format/byte_order.h"
#include "format/own_process.h"
#include "format/payloads.h"
#include "format/spool_writer.h"
#include "format/torch_payloads.h"

namespace strata::agent::torch {
namespace {

using format::TorchOpRecord;

// 4096 finished ops (192 KiB) per chunk: one writev per ~4K ops.
constexpr uint32_t kCapacity = 4096;
// Ops open at once on one thread; deeper ones are counted, not recorded.
constexpr uint32_t kMaxOpen = 256;
// Threads the exit path can reach (as instrument.cc).
constexpr uint32_t kMaxThreads = 4096;
// External ids are taken from the process counter in blocks: no shared
// atomic per op.
constexpr uint64_t kIdBlock = 1024;
constexpr uint32_t kNameCache = 256;
constexpr int64_t kDrainExitNs = 2'000'000'000;
constexpr int64_t kDrainSignalNs = 100'000'000;

struct OpenOp {
  const void* fn;  // the RecordFunction: pairs the end with its start
  TorchOpRecord rec;  // flags has kTorchOpPushed when its id was pushed: pop at the end
};

struct CachedName {
  uint64_t hash;
  uint32_t id;
  const char* text;  // the interned copy (stable)
};

struct ThreadBuffer {
  std::atomic<uint32_t> count;  // ops[0, count) are finished; the owner writes it
  std::atomic<uint32_t> open_count;
  uint32_t tid;
  uint32_t slot;
  uint32_t overflow;  // starts not recorded because kMaxOpen ops were open
  uint64_t next_id, id_end;
  char name[16];
  CachedName names[kNameCache];
  OpenOp open[kMaxOpen];
  TorchOpRecord ops[kCapacity];
};

enum State : uint8_t { kOff = 0, kOn = 1 };

std::atomic<uint8_t> g_state{kOff};
std::atomic<int> g_flushers{0};
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_next_id_block{1};
std::atomic<ThreadBuffer*> g_threads[kMaxThreads];
std::atomic<int (*)(uint64_t)> g_push{nullptr};
std::atomic<int (*)()> g_pop{nullptr};
// A forked child whose spool is not created yet (child_spool_ready).
std::atomic<bool> g_child_pending{false};
bool child_spool_ready();

pid_t g_owner_pid = 0;
pthread_key_t g_key;
alignas(format::SpoolWriter) unsigned char g_writer_storage[sizeof(format::SpoolWriter)];
format::SpoolWriter* g_writer = nullptr;
char g_dir[4096];
std::mutex g_open_mu;  // the spool's opening, once per process
bool g_open_tried = false;

// Interned strings: text -> id. Leaked: callbacks may run after static
// destructors.
std::mutex g_intern_mu;
auto* g_strings = new std::unordered_map<std::string, uint32_t>;
uint32_t g_next_string = 1;

// The status line of this process (kRecording or kCannotHook), repeated in a
// forked child's spool so that each spool has one.
char g_status_text[512];
uint32_t g_status = 0;

// libtorch.
NameFn g_name = nullptr;
AddGlobalCallbackFn g_add = nullptr;
RemoveCallbackFn g_remove = nullptr;
PeekSequenceFn g_peek = nullptr;
InputSizesFn g_input_sizes = nullptr;
size_t g_seq_offset = 0;
bool g_seq_known = false;
bool g_shapes = false;
std::atomic<int> g_stack{0};
uint64_t g_handles[4];
int g_handle_count = 0;
char g_error[512] = "";

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
constexpr size_t kSignalCount = sizeof kFatalSignals / sizeof kFatalSignals[0];
struct sigaction g_old_actions[kSignalCount];
bool g_handled[kSignalCount];

__attribute__((tls_model("initial-exec"))) thread_local ThreadBuffer* t_buffer = nullptr;

// CLOCK_MONOTONIC, the clock of the CUDA agent's API records (see the top).
inline uint64_t stamp() { return static_cast<uint64_t>(monotonic_ns()); }

uint32_t current_tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

void set_error(const char* text) { std::snprintf(g_error, sizeof g_error, "%s", text); }

bool enter_flusher() {
  g_flushers.fetch_add(1, std::memory_order_seq_cst);
  if (g_state.load(std::memory_order_seq_cst) != kOn) {
    g_flushers.fetch_sub(1, std::memory_order_seq_cst);
    return false;
  }
  return true;
}

void leave_flusher() { g_flushers.fetch_sub(1, std::memory_order_seq_cst); }

// One torch-ops chunk: the 40-byte clock prefix (stamps in ns, no TSC pairs),
// then `n` records.
void write_ops(uint32_t tid, const TorchOpRecord* ops, uint32_t n) {
  if (n == 0) return;
  unsigned char prefix[format::kTorchOpsPrefix] = {};
  namespace off = format::instrument_events_offset;
  format::store_le32(prefix + off::kTid, tid);
  format::store_le32(prefix + off::kClock, static_cast<uint32_t>(format::InstrumentClock::kMonotonic));
  iovec parts[2] = {{prefix, sizeof prefix}, {const_cast<TorchOpRecord*>(ops), size_t{n} * sizeof(TorchOpRecord)}};
  if (!g_writer->append_iov(format::ChunkKind::kTorchOps, parts, 2)) {
    g_dropped.fetch_add(n, std::memory_order_relaxed);
  }
}

void write_name(ThreadBuffer* b, const char* name, size_t len) {
  if (len >= sizeof b->name) len = sizeof b->name - 1;
  if (std::strncmp(b->name, name, sizeof b->name) == 0 && b->name[len] == '\0') return;
  std::memcpy(b->name, name, len);
  b->name[len] = '\0';
  g_writer->append_thread_name(b->tid, std::string_view(name, len));
}

void write_own_name(ThreadBuffer* b) {
  char name[17] = {};
  if (prctl(PR_GET_NAME, name) == 0) write_name(b, name, std::strlen(name));
}

// Async-signal-safe: /proc/self/task/TID/comm through format's syscall reader.
void write_other_name(ThreadBuffer* b) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%u/comm", b->tid);
  format::ProcFile comm;
  if (!format::read_proc_file(path, &comm)) return;
  size_t len = comm.size;
  while (len > 0 && comm.data[len - 1] == '\n') --len;
  if (len > 0) write_name(b, comm.data, len);
  format::release_proc_file(&comm);
}

void write_status(uint32_t status, const char* text) {
  unsigned char prefix[format::kTorchStatusPrefix] = {};
  format::store_le32(prefix, status);
  iovec parts[2] = {{prefix, sizeof prefix}, {const_cast<char*>(text), std::strlen(text)}};
  g_writer->append_iov(format::ChunkKind::kTorchStatus, parts, 2);
}

// DIR/torch-PID.bin (torch-PID.N.bin when a file of that pid already exists:
// a pid reused by a fork before an exec).
bool open_spool() {
  for (int attempt = 0; attempt < 16; ++attempt) {
    char path[4200];
    int n = attempt == 0 ? std::snprintf(path, sizeof path, "%s/torch-%d.bin", g_dir, int(getpid()))
                         : std::snprintf(path, sizeof path, "%s/torch-%d.%d.bin", g_dir, int(getpid()), attempt);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof path) return false;
    if (access(path, F_OK) == 0) continue;
    auto writer = format::SpoolWriter::open(path);
    if (!writer.ok()) return false;
    *g_writer = std::move(writer.value());
    return true;
  }
  return false;
}

void register_buffer(ThreadBuffer* b) {
  b->slot = kMaxThreads;
  for (uint32_t i = 0; i < kMaxThreads; ++i) {
    ThreadBuffer* expected = nullptr;
    if (g_threads[i].compare_exchange_strong(expected, b, std::memory_order_acq_rel)) {
      b->slot = i;
      return;
    }
  }
}

ThreadBuffer* allocate_buffer() {
  void* mem = mmap(nullptr, sizeof(ThreadBuffer), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* b = static_cast<ThreadBuffer*>(mem);  // zero-filled
  b->tid = current_tid();
  register_buffer(b);
  t_buffer = b;
  pthread_setspecific(g_key, b);
  return b;
}

// The thread's finished ops, then (at exit or a crash) its open ones.
void write_thread(ThreadBuffer* b, bool with_open, bool own) {
  uint32_t n = b->count.load(std::memory_order_acquire);
  write_ops(b->tid, b->ops, n);
  b->count.store(0, std::memory_order_relaxed);
  if (with_open) {
    uint32_t open = b->open_count.load(std::memory_order_acquire);
    if (open > kMaxOpen) open = kMaxOpen;
    uint64_t now = stamp();
    for (uint32_t i = 0; i < open; ++i) {
      TorchOpRecord rec = b->open[i].rec;
      rec.end = now < rec.start ? rec.start : now;
      rec.flags |= format::kTorchOpUnfinished;
      write_ops(b->tid, &rec, 1);
    }
  }
  if (own) {
    write_own_name(b);
  } else {
    write_other_name(b);
  }
}

bool drain_flushers(int self, int64_t timeout_ns) {
  int64_t deadline = monotonic_ns() + timeout_ns;
  while (g_flushers.load(std::memory_order_seq_cst) > self) {
    if (monotonic_ns() > deadline) return false;
    sched_yield();
  }
  return true;
}

void write_drop_note() {
  uint64_t dropped = g_dropped.load(std::memory_order_relaxed);
  if (dropped == 0) return;
  char text[160];
  std::snprintf(text, sizeof text,
                "%llu ops were not recorded (more than %u open on one thread, or the spool could not be written)",
                static_cast<unsigned long long>(dropped), kMaxOpen);
  write_status(static_cast<uint32_t>(format::TorchStatus::kNote), text);
}

// Stops recording and writes everything; async-signal-safe (no allocation:
// strings were written when interned).
void finish(uint32_t signal) {
  // A forked child that never wrote: its spool is created now, except from a
  // signal handler (it allocates), where the child's ops are lost.
  if (g_child_pending.load(std::memory_order_acquire) && (signal != 0 || !child_spool_ready())) return;
  uint8_t on = kOn;
  if (!g_state.compare_exchange_strong(on, kOff, std::memory_order_seq_cst)) return;
  if (!drain_flushers(0, signal ? kDrainSignalNs : kDrainExitNs)) return;  // reads as a crash
  ThreadBuffer* own = t_buffer;
  if (own != nullptr) write_thread(own, true, true);
  for (auto& slot : g_threads) {
    ThreadBuffer* b = slot.load(std::memory_order_acquire);
    if (b != nullptr && b != own) write_thread(b, true, false);
  }
  write_drop_note();
  format::append_own_memory_map(*g_writer);
  g_writer->close(signal);
}

void on_exit() {
  if (getpid() == g_owner_pid) finish(0);
}

void on_fatal_signal(int sig, siginfo_t*, void*) {
  int saved_errno = errno;
  finish(static_cast<uint32_t>(sig));
  for (size_t i = 0; i < kSignalCount; ++i) {
    if (kFatalSignals[i] == sig && g_handled[i]) sigaction(sig, &g_old_actions[i], nullptr);
  }
  raise(sig);
  errno = saved_errno;
}

// Only signals left at their default: a program's own handler is kept.
void install_signal_handlers() {
  for (size_t i = 0; i < kSignalCount; ++i) {
    struct sigaction old = {};
    if (sigaction(kFatalSignals[i], nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO)) {
      continue;
    }
    struct sigaction act = {};
    act.sa_sigaction = on_fatal_signal;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
    if (sigaction(kFatalSignals[i], &act, &g_old_actions[i]) == 0) g_handled[i] = true;
  }
}

void on_thread_exit(void* arg) {
  auto* b = static_cast<ThreadBuffer*>(arg);
  if (b->count.load(std::memory_order_relaxed) > 0 && !child_spool_ready()) return;
  if (!enter_flusher()) return;  // recording stopped: the exit path may read it; leave it mapped
  write_thread(b, false, true);
  if (b->slot < kMaxThreads) g_threads[b->slot].store(nullptr, std::memory_order_release);
  if (t_buffer == b) t_buffer = nullptr;
  munmap(b, sizeof(ThreadBuffer));
  leave_flusher();
}

// fork(): the intern table's lock is held across it, so the child's copy is
// consistent.
void on_fork_prepare() { g_intern_mu.lock(); }
void on_fork_parent() { g_intern_mu.unlock(); }

// The child records into a spool of its own, starting empty: the parent's
// buffers, other threads and open ops are not the child's. The spool is
// created only when the child has something to write (child_spool_ready):
// a fork that goes on to exec (subprocess) leaves no empty spool behind.
void on_fork_child() {
  g_intern_mu.unlock();
  if (g_state.load(std::memory_order_relaxed) != kOn) return;
  g_writer->abandon();
  g_flushers.store(0, std::memory_order_relaxed);
  ThreadBuffer* own = t_buffer;
  for (auto& slot : g_threads) {
    ThreadBuffer* b = slot.load(std::memory_order_relaxed);
    if (b != nullptr && b != own) slot.store(nullptr, std::memory_order_relaxed);
  }
  if (own != nullptr) {
    own->count.store(0, std::memory_order_relaxed);
    own->open_count.store(0, std::memory_order_relaxed);
    own->overflow = 0;
    own->tid = current_tid();
    own->name[0] = '\0';
  }
  g_dropped.store(0, std::memory_order_relaxed);
  g_owner_pid = getpid();
  g_child_pending.store(true, std::memory_order_release);
}

// In a forked child, before its first write: opens torch-CHILDPID.bin and
// writes what the parent's spool had before any record (process, strings,
// status). False when it cannot: recording stops.
bool child_spool_ready() {
  if (!g_child_pending.load(std::memory_order_acquire)) return true;
  std::lock_guard<std::mutex> lock(g_intern_mu);
  if (!g_child_pending.load(std::memory_order_relaxed)) return true;
  g_child_pending.store(false, std::memory_order_release);
  if (!open_spool()) {
    g_state.store(kOff, std::memory_order_relaxed);
    return false;
  }
  format::append_own_process_info(*g_writer);
  std::vector<format::StringEntry> entries;
  entries.reserve(g_strings->size());
  for (const auto& [text, id] : *g_strings) entries.push_back({id, text});
  g_writer->append_strings(entries);
  if (g_status != 0) write_status(g_status, g_status_text);
  return true;
}

// Opens the spool once per process. Returns whether it is open.
bool ensure_open() {
  std::lock_guard<std::mutex> lock(g_open_mu);
  if (g_open_tried) return g_state.load(std::memory_order_acquire) == kOn;
  g_open_tried = true;
  const char* dir = std::getenv(format::kTorchDirEnv);
  size_t len = dir != nullptr ? std::strlen(dir) : 0;
  if (len == 0 || len >= sizeof g_dir) {
    set_error("STRATA_TORCH_DIR is not set");
    return false;
  }
  std::memcpy(g_dir, dir, len + 1);
  g_writer = new (g_writer_storage) format::SpoolWriter();
  g_owner_pid = getpid();
  if (pthread_key_create(&g_key, on_thread_exit) != 0 || !open_spool()) {
    std::snprintf(g_error, sizeof g_error, "cannot create its spool in '%s': %s", g_dir, std::strerror(errno));
    return false;
  }
  format::append_own_process_info(*g_writer);
  pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
  std::atexit(on_exit);
  g_state.store(kOn, std::memory_order_release);
  return true;
}

uint64_t fnv1a(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s != '\0'; ++s) h = (h ^ static_cast<uint8_t>(*s)) * 1099511628211ull;
  return h;
}

// The id of `text` in this spool, and its interned copy (stable: a node
// key); the strings chunk is written on first use, before any record names it.
CachedName intern_slow(uint64_t hash, const char* text) {
  child_spool_ready();
  std::lock_guard<std::mutex> lock(g_intern_mu);
  auto [it, added] = g_strings->emplace(text, g_next_string);
  if (added) {
    ++g_next_string;
    format::StringEntry entry{it->second, it->first};
    g_writer->append_strings(std::span<const format::StringEntry>(&entry, 1));
  }
  return CachedName{hash, it->second, it->first.c_str()};
}

// Content-keyed through the thread's cache: record_function names are
// std::strings that die with the op, so a pointer is no key.
inline uint32_t intern(ThreadBuffer* b, const char* text) {
  uint64_t h = fnv1a(text);
  CachedName& c = b->names[h % kNameCache];
  if (c.hash == h && c.text != nullptr && std::strcmp(c.text, text) == 0) return c.id;
  c = intern_slow(h, text);
  return c.id;
}

// Input shapes as torch prints them: "[[8, 16], [16], []]".
uint32_t shapes_id(ThreadBuffer* b, const at::RecordFunction& fn) {
  std::vector<std::vector<int64_t>> sizes = g_input_sizes(fn, true);
  std::string text = "[";
  char digits[24];
  for (size_t i = 0; i < sizes.size(); ++i) {
    text += i == 0 ? "[" : ", [";
    for (size_t d = 0; d < sizes[i].size(); ++d) {
      std::snprintf(digits, sizeof digits, d == 0 ? "%lld" : ", %lld", static_cast<long long>(sizes[i][d]));
      text += digits;
    }
    text += ']';
  }
  text += ']';
  return intern(b, text.c_str());
}

void push_record(ThreadBuffer* b, const TorchOpRecord& rec) {
  uint32_t n = b->count.load(std::memory_order_relaxed);
  if (n == kCapacity) {
    if (!child_spool_ready() || !enter_flusher()) return;
    write_ops(b->tid, b->ops, n);
    b->count.store(0, std::memory_order_relaxed);
    write_own_name(b);
    leave_flusher();
    n = 0;
  }
  b->ops[n] = rec;
  b->count.store(n + 1, std::memory_order_release);
}

template <uint8_t kScope>
std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (g_state.load(std::memory_order_relaxed) != kOn) return nullptr;
  uint64_t t = stamp();
  ThreadBuffer* b = t_buffer;
  if (b == nullptr && (b = allocate_buffer()) == nullptr) return nullptr;
  uint32_t depth = b->open_count.load(std::memory_order_relaxed);
  if (depth >= kMaxOpen) {
    ++b->overflow;
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (b->next_id == b->id_end) {
    b->next_id = g_next_id_block.fetch_add(kIdBlock, std::memory_order_relaxed);
    b->id_end = b->next_id + kIdBlock;
  }
  OpenOp& op = b->open[depth];
  op.fn = &fn;
  TorchOpRecord& rec = op.rec;
  rec.start = t;
  rec.end = 0;
  rec.external_id = b->next_id++;
  rec.seq = g_seq_known ? *reinterpret_cast<const int64_t*>(reinterpret_cast<const char*>(&fn) + g_seq_offset) : -1;
  rec.name_id = intern(b, g_name(&fn));
  rec.shapes_id = g_shapes && g_input_sizes != nullptr ? shapes_id(b, fn) : 0;
  rec.stack_id = 0;
  rec.depth = static_cast<uint16_t>(depth);
  rec.scope = kScope;
  rec.flags = 0;
  if (int frames = g_stack.load(std::memory_order_relaxed); frames > 0) {
    // An op inside an aten op or an autograd node was called by C++ from
    // the same Python line as that op: it inherits the stack. Otherwise it
    // was called from Python (or from nothing): read the frames.
    const TorchOpRecord* parent = depth > 0 ? &b->open[depth - 1].rec : nullptr;
    if (parent != nullptr && (parent->scope == 0 || parent->scope == 1)) {
      rec.stack_id = parent->stack_id;
    } else {
      thread_local std::string text;
      if (python_stack(frames, &text)) rec.stack_id = intern(b, text.c_str());
    }
  }
  b->open_count.store(depth + 1, std::memory_order_release);
  auto push = g_push.load(std::memory_order_acquire);
  if (push != nullptr && push(rec.external_id) == 0) rec.flags |= format::kTorchOpPushed;
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (g_state.load(std::memory_order_relaxed) != kOn) return;
  uint64_t t = stamp();
  ThreadBuffer* b = t_buffer;
  if (b == nullptr) return;
  uint32_t open = b->open_count.load(std::memory_order_relaxed);
  // The top, normally; an op ended out of order is searched for.
  for (uint32_t i = open; i-- > 0;) {
    if (b->open[i].fn != &fn) continue;
    OpenOp& op = b->open[i];
    if (op.rec.flags & format::kTorchOpPushed) {
      if (auto pop = g_pop.load(std::memory_order_acquire)) pop();
    }
    op.rec.end = t;
    push_record(b, op.rec);
    for (uint32_t k = i + 1; k < open; ++k) b->open[k - 1] = b->open[k];
    b->open_count.store(open - 1, std::memory_order_release);
    return;
  }
  // Not open here: a start past kMaxOpen, or an op ended on another thread
  // than its start (torch 2.x async ops; that one stays unfinished).
  if (b->overflow > 0) --b->overflow;
}

// The loaded libtorch_cpu.so (the program imported torch), found by name.
int find_torch_cpu(dl_phdr_info* info, size_t, void* data) {
  const char* n = info->dlpi_name;
  if (n != nullptr && std::strstr(n, "libtorch_cpu.so") != nullptr) {
    std::snprintf(static_cast<char*>(data), 1024, "%s", n);
    return 1;
  }
  return 0;
}

// 0, or a code with g_error set.
int resolve_torch() {
  if (g_add != nullptr) return 0;
  char path[1024] = "";
  dl_iterate_phdr(find_torch_cpu, path);
  if (path[0] == '\0') {
    set_error("libtorch_cpu.so is not loaded in this process");
    return 2;
  }
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  const char* add_symbol = std::getenv("STRATA_TORCH_TEST_MISSING_SYMBOL") ? "strata_no_such_symbol" : kAddGlobalCallback;
  auto add = h ? reinterpret_cast<AddGlobalCallbackFn>(dlsym(h, add_symbol)) : nullptr;
  g_name = h ? reinterpret_cast<NameFn>(dlsym(h, kRecordFunctionName)) : nullptr;
  g_remove = h ? reinterpret_cast<RemoveCallbackFn>(dlsym(h, kRemoveCallback)) : nullptr;
  g_peek = h ? reinterpret_cast<PeekSequenceFn>(dlsym(h, kPeekSequence)) : nullptr;
  g_input_sizes = h ? reinterpret_cast<InputSizesFn>(dlsym(h, kInputSizes)) : nullptr;
  if (add == nullptr || g_name == nullptr || g_remove == nullptr) {
    std::snprintf(g_error, sizeof g_error,
                  "%s does not export at::addGlobalCallback, at::removeCallback and RecordFunction::name", path);
    return 3;
  }
  g_add = add;
  return 0;
}

// Calibration: while the probe is registered, the hook runs two
// autograd-recording aten::mul; the dispatcher gives each the value of
// at::sequence_number::peek() as its sequence number, so the 8-byte slot of
// the RecordFunction holding that value in both calls is sequence_nr_.
std::vector<size_t>* g_candidates = new std::vector<size_t>;
int g_probes = 0;
uint64_t g_probe_handle = 0;
bool g_probing = false;

std::unique_ptr<at::ObserverContext> probe_start(const at::RecordFunction& fn) {
  if (std::strcmp(g_name(&fn), "aten::mul") != 0) return nullptr;
  int64_t want = g_peek();
  std::vector<size_t> found;
  for (size_t off = 8; off <= 400; off += 8) {
    if (*reinterpret_cast<const int64_t*>(reinterpret_cast<const char*>(&fn) + off) == want) found.push_back(off);
  }
  if (g_probes++ == 0) {
    *g_candidates = found;
  } else {
    std::vector<size_t> both;
    for (size_t c : *g_candidates)
      for (size_t f : found)
        if (c == f) both.push_back(c);
    *g_candidates = both;
  }
  return nullptr;
}

}  // namespace
}  // namespace strata::agent::torch

using namespace strata::agent::torch;
namespace format = strata::format;

#define STRATA_TORCH_API extern "C" __attribute__((visibility("default")))

// Registers the sequence-number probe; the caller then runs two
// autograd-recording aten::mul and calls strata_torch_calibrate_end().
STRATA_TORCH_API int strata_torch_calibrate_begin() {
  if (int rc = resolve_torch(); rc != 0) return rc;
  if (g_peek == nullptr) {
    set_error("libtorch_cpu.so does not export at::sequence_number::peek");
    return 3;
  }
  at::RecordFunctionCallback cb;
  cb.start_ = probe_start;
  cb.scopes_[0] = true;
  g_probes = 0;
  g_candidates->clear();
  g_probe_handle = g_add(cb);
  g_probing = true;
  return 0;
}

// The offset of sequence_nr_ found (and used from now on), or -1: ops are
// then recorded with seq -1.
STRATA_TORCH_API int strata_torch_calibrate_end() {
  if (!g_probing) return -1;
  g_probing = false;
  g_remove(g_probe_handle);
  g_seq_known = g_probes >= 2 && g_candidates->size() == 1;
  g_seq_offset = g_seq_known ? (*g_candidates)[0] : 0;
  return g_seq_known ? static_cast<int>(g_seq_offset) : -1;
}

// 0: recording. Otherwise a code (1 no spool, 2 no libtorch_cpu.so, 3 a
// missing symbol) and strata_torch_last_error() says why in a few words.
STRATA_TORCH_API int strata_torch_register() {
  if (!ensure_open()) return 1;
  if (g_handle_count > 0) return 0;
  if (int rc = resolve_torch(); rc != 0) return rc;
  const char* shapes = std::getenv(format::kTorchShapesEnv);
  g_shapes = shapes != nullptr && std::strcmp(shapes, "1") == 0;
  const char* stack = std::getenv(format::kTorchStackEnv);
  int frames = stack != nullptr ? std::atoi(stack) : 0;
  if (frames > 0 && !python_stack_init()) frames = 0;
  g_stack.store(frames > 64 ? 64 : frames, std::memory_order_relaxed);
  // Disjoint scope sets: each start function knows its scope.
  auto add = [](at::RecordFunctionCallback::StartCallback start, std::initializer_list<int> scopes, bool rest) {
    at::RecordFunctionCallback cb;
    cb.start_ = start;
    cb.end_ = on_end;
    for (int s = 0; s < at::kNumScopes; ++s) cb.scopes_[s] = rest;
    for (int s : scopes) cb.scopes_[s] = !rest;
    cb.needs_inputs_ = g_shapes;
    g_handles[g_handle_count++] = g_add(cb);
  };
  add(on_start<0>, {0}, false);  // aten ops, autograd nodes run forward
  add(on_start<1>, {1}, false);  // autograd nodes run by the engine
  add(on_start<7>, {7}, false);  // record_function, optimizer steps
  // The rare rest (TorchScript, lite interpreter, static runtime, custom
  // classes) share the fourth: their scope is written as the first of them,
  // kTorchScriptFunction (docs/torch-ops.md, Limits).
  add(on_start<2>, {0, 1, 7}, true);
  static std::once_flag once;
  std::call_once(once, [] {
    install_signal_handlers();
    // The CUDA agent, if it is loaded: whichever of the two loads second connects them.
    const char* agent = std::getenv("CUDA_INJECTION64_PATH");
    if (void* h = agent != nullptr ? dlopen(agent, RTLD_NOW | RTLD_NOLOAD) : nullptr) {
      if (auto attach = reinterpret_cast<void (*)()>(dlsym(h, "strata_agent_attach_torch"))) attach();
    }
  });
  return 0;
}

// Benchmarks: removes the callbacks, so that a later register starts over.
STRATA_TORCH_API void strata_torch_unregister() {
  for (int i = 0; i < g_handle_count; ++i) g_remove(g_handles[i]);
  g_handle_count = 0;
}

STRATA_TORCH_API const char* strata_torch_last_error() { return g_error; }

// A torch-status chunk. kRecording and kCannotHook are remembered so that a
// forked child's spool carries the line too.
STRATA_TORCH_API void strata_torch_note(int status, const char* text) {
  if (text == nullptr || !ensure_open() || !child_spool_ready()) return;
  auto kind = static_cast<uint32_t>(status);
  if (kind == static_cast<uint32_t>(format::TorchStatus::kRecording) ||
      kind == static_cast<uint32_t>(format::TorchStatus::kCannotHook)) {
    std::lock_guard<std::mutex> lock(g_intern_mu);
    g_status = kind;
    std::snprintf(g_status_text, sizeof g_status_text, "%s", text);
  }
  write_status(kind, text);
}

// Writes every thread's finished ops now; recording goes on. Another thread
// recording at the same moment may lose the op it was appending: callers
// (the hook's worker finalizer) call it when the other threads are idle.
STRATA_TORCH_API void strata_torch_flush() {
  if (!child_spool_ready() || !enter_flusher()) return;
  ThreadBuffer* own = t_buffer;
  for (auto& slot : g_threads) {
    ThreadBuffer* b = slot.load(std::memory_order_acquire);
    if (b != nullptr) write_thread(b, false, b == own);
  }
  leave_flusher();
}

// Ends recording in this process as its exit would: for processes that leave
// through os._exit (DataLoader workers), which runs no atexit handler.
STRATA_TORCH_API void strata_torch_finish() {
  if (getpid() == g_owner_pid) finish(0);
}

// Stops reading Python stacks: the hook calls it when the interpreter starts
// to finalize (a GIL taken then may never come).
STRATA_TORCH_API void strata_torch_stop_stacks() { g_stack.store(0, std::memory_order_relaxed); }

// The CUDA agent's external-correlation push and pop (CUSTOM0); null
// functions detach.
STRATA_TORCH_API void strata_torch_attach_cuda(int (*push)(uint64_t), int (*pop)()) {
  g_pop.store(pop, std::memory_order_release);
  g_push.store(push, std::memory_order_release);
}
