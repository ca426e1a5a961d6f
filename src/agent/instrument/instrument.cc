// strata::instrument: the runtime of `strata cpu --instrument`
// (docs/instrument.md). Programs built with -finstrument-functions call
// __cyg_profile_func_enter/exit around every function; this file defines
// them. Without STRATA_INSTRUMENT_DIR in the environment each call costs one
// load and one predictable branch. With it, each call appends one 8-byte word
// {address, exit bit, clock delta} to a per-thread buffer (layout in
// format/instrument_payloads.h), and full buffers go to the process's spool
// (docs/spool-format.md) as instrument-events chunks. Words rather than
// 16-byte {stamp, address} pairs halve the bytes written, which was half the
// per-call cost (docs/instrument.md, Overhead).
//
// Threading: a thread writes only its own buffer on the hot path (no atomics
// beyond relaxed loads and stores, no locks). Spool appends are whole-chunk
// writevs, safe from any thread. Buffers are registered in a fixed table so
// the exit handler can write what threads still running at exit recorded.
// The exit and fatal-signal paths first stop recording (g_state), then wait
// for in-flight flushes (g_flushers) before closing the spool, so no thread
// appends to a closed (and possibly reused) fd.
// Allocation: init allocates (the spool path, SpoolWriter::open); each
// thread's buffer is one mmap on its first event; the flush, exit and signal
// paths use only syscalls and the stack, so they are async-signal-safe.
// Nothing here throws, aborts or prints into the target.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "common/clock.h"
#include "format/byte_order.h"
#include "format/instrument_payloads.h"
#include "format/own_process.h"
#include "format/payloads.h"
#include "format/spool_writer.h"

#define STRATA_NO_INSTRUMENT __attribute__((no_instrument_function))

namespace strata::instrument {
namespace {

// Words are copied to the spool as they lie in memory.
static_assert(std::endian::native == std::endian::little, "events are written in host order");

// 128K words (1 MiB) per thread: one writev per ~64K calls keeps the
// syscall cost per event negligible, and a thread that never fills it costs
// 1 MiB of address space, touched only as far as it records.
constexpr uint32_t kCapacity = 128 * 1024;
// A clock record (marker + stamp) and the event after it.
constexpr uint32_t kSlowWords = 3;
// Threads whose buffers the exit handler can reach; more threads still
// record, they are only not flushed if still running at exit.
constexpr uint32_t kMaxThreads = 4096;
// How long the exit path waits for other threads' flushes in progress.
constexpr int64_t kDrainExitNs = 2'000'000'000;
constexpr int64_t kDrainSignalNs = 100'000'000;

struct ThreadBuffer {
  std::atomic<uint32_t> count;  // words[0, count) are reserved; the owner writes it
  uint32_t tid;
  uint32_t slot;  // index in g_threads, or kMaxThreads when the table was full
  char name[16];  // the last name written to the spool
  // The stamp the next word's delta is taken from; 0 after a flush, so each
  // chunk starts with a clock record.
  uint64_t last;
  // The time this thread spent in the runtime's own slow path (the buffer's
  // mmap, flushes to the spool), taken off every later stamp: a flush of
  // 128K words costs about 10 ns per event it carries, which would
  // otherwise land in whatever function was running (docs/instrument.md,
  // Calibration).
  uint64_t paused;
  uint64_t words[kCapacity];
};

enum State : uint8_t {
  kUninit = 0,  // before init: zero-initialized, so the first call initializes
  kOff = 1,     // not under strata (or stopped): the hot path returns at once
  kInitializing = 2,
  kOn = 3,
};

std::atomic<uint8_t> g_state{kUninit};
std::atomic<int> g_flushers{0};
std::atomic<uint64_t> g_dropped{0};
std::atomic<ThreadBuffer*> g_threads[kMaxThreads];

format::InstrumentClock g_clock = format::InstrumentClock::kMonotonic;
bool g_use_tsc = false;
int64_t g_ref_ns = 0;
uint64_t g_ref_ticks = 0;
pid_t g_owner_pid = 0;
pthread_key_t g_key;
// Never destroyed: static destructors may run before the exit handler, and
// instrumented code may run after them.
alignas(format::SpoolWriter) unsigned char g_writer_storage[sizeof(format::SpoolWriter)];
format::SpoolWriter* g_writer = nullptr;
char g_dir[4096];

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
struct sigaction g_old_actions[sizeof kFatalSignals / sizeof kFatalSignals[0]];
bool g_handled[sizeof kFatalSignals / sizeof kFatalSignals[0]];

// initial-exec: a plain %fs-relative load, no __tls_get_addr call, even when
// the library is linked into a shared object.
__attribute__((tls_model("initial-exec"))) thread_local ThreadBuffer* t_buffer = nullptr;
// This thread is inside the slow path (allocating or flushing): events from
// code it calls (an instrumented libstrata build, a signal handler) are
// dropped instead of recursing.
__attribute__((tls_model("initial-exec"))) thread_local bool t_in_slow = false;

STRATA_NO_INSTRUMENT inline uint64_t ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

STRATA_NO_INSTRUMENT inline uint64_t stamp() {
  return g_use_tsc ? ticks() : static_cast<uint64_t>(monotonic_ns());
}

// A (CLOCK_MONOTONIC, TSC) pair: the tick count is read between two clock
// reads and paired with their midpoint, so the pair's error is half a
// clock_gettime call.
STRATA_NO_INSTRUMENT void clock_pair(int64_t* ns, uint64_t* tick) {
  int64_t a = monotonic_ns();
  *tick = ticks();
  int64_t b = monotonic_ns();
  *ns = a + (b - a) / 2;
}

// rdtsc is 2.5x cheaper than the vDSO clock_gettime (12 vs 30 ns measured
// on the dev machine), which decides the 50 ns/call goal; it is only a clock
// when the TSC is invariant (CPUID 0x80000007 EDX bit 8: constant rate, not
// stopped in deep C-states), which also makes it agree across cores.
STRATA_NO_INSTRUMENT bool tsc_is_invariant() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
  __cpuid(0x80000007u, eax, ebx, ecx, edx);
  return (edx >> 8) & 1u;
#else
  return false;
#endif
}

STRATA_NO_INSTRUMENT uint32_t current_tid() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

STRATA_NO_INSTRUMENT bool enter_flusher() {
  g_flushers.fetch_add(1, std::memory_order_seq_cst);
  if (g_state.load(std::memory_order_seq_cst) != kOn) {
    g_flushers.fetch_sub(1, std::memory_order_seq_cst);
    return false;
  }
  return true;
}

STRATA_NO_INSTRUMENT void leave_flusher() {
  g_flushers.fetch_sub(1, std::memory_order_seq_cst);
}

// Writes words[0, n) of `b` as one instrument-events chunk.
STRATA_NO_INSTRUMENT void write_events(const ThreadBuffer* b, uint32_t n) {
  if (n == 0) return;
  unsigned char prefix[format::kInstrumentEventsPrefix] = {};
  int64_t now_ns = 0;
  uint64_t now_ticks = 0;
  if (g_use_tsc) clock_pair(&now_ns, &now_ticks);
  format::store_le32(prefix + format::instrument_events_offset::kTid, b->tid);
  format::store_le32(prefix + format::instrument_events_offset::kClock,
                     static_cast<uint32_t>(g_clock));
  format::store_le64(prefix + format::instrument_events_offset::kRefNs,
                     static_cast<uint64_t>(g_use_tsc ? g_ref_ns : 0));
  format::store_le64(prefix + format::instrument_events_offset::kRefTicks,
                     g_use_tsc ? g_ref_ticks : 0);
  format::store_le64(prefix + format::instrument_events_offset::kNowNs,
                     static_cast<uint64_t>(now_ns));
  format::store_le64(prefix + format::instrument_events_offset::kNowTicks, now_ticks);
  iovec parts[2] = {{prefix, sizeof prefix},
                    {const_cast<uint64_t*>(b->words), size_t{n} * format::kInstrumentWordSize}};
  if (!g_writer->append_iov(format::ChunkKind::kInstrumentEvents, parts, 2)) {
    g_dropped.fetch_add(n, std::memory_order_relaxed);
  }
}

// Appends a thread-name chunk when the name differs from the last one written.
STRATA_NO_INSTRUMENT void write_name(ThreadBuffer* b, const char* name, size_t len) {
  if (len >= sizeof b->name) len = sizeof b->name - 1;
  if (std::strncmp(b->name, name, sizeof b->name) == 0 && b->name[len] == '\0') return;
  std::memcpy(b->name, name, len);
  b->name[len] = '\0';
  g_writer->append_thread_name(b->tid, std::string_view(name, len));
}

STRATA_NO_INSTRUMENT void write_own_name(ThreadBuffer* b) {
  char name[17] = {};
  if (prctl(PR_GET_NAME, name) == 0) write_name(b, name, std::strlen(name));
}

STRATA_NO_INSTRUMENT void write_other_name(ThreadBuffer* b) {
  char path[64] = "/proc/self/task/";
  char digits[16];
  int nd = 0;
  for (uint32_t t = b->tid; nd == 0 || t != 0; t /= 10)
    digits[nd++] = static_cast<char>('0' + t % 10);
  size_t at = std::strlen(path);
  while (nd > 0) path[at++] = digits[--nd];
  std::memcpy(path + at, "/comm", 6);
  format::ProcFile comm;
  if (!format::read_proc_file(path, &comm)) return;
  size_t len = comm.size;
  while (len > 0 && comm.data[len - 1] == '\n') --len;
  if (len > 0) write_name(b, comm.data, len);
  format::release_proc_file(&comm);
}

// The maps as every producer writes them (format/own_process.h: syscalls
// only, async-signal-safe).
STRATA_NO_INSTRUMENT void write_memory_map() {
  format::append_own_memory_map(*g_writer);
}

STRATA_NO_INSTRUMENT void write_drop_counters() {
  format::DropCounter counter{static_cast<uint32_t>(format::DropCounterKind::kInstrumentEvents),
                              g_dropped.load(std::memory_order_relaxed)};
  g_writer->append_drop_counters(std::span<const format::DropCounter>(&counter, 1));
}

// Opens DIR/instrument-PID.bin, or instrument-PID.N.bin when a forked child
// of the same pid number's image (before an exec) already made that file.
STRATA_NO_INSTRUMENT bool open_spool() {
  char pid[16];
  int nd = 0;
  char digits[16];
  for (uint32_t p = static_cast<uint32_t>(getpid()); nd == 0 || p != 0; p /= 10)
    digits[nd++] = static_cast<char>('0' + p % 10);
  int at = 0;
  while (nd > 0) pid[at++] = digits[--nd];
  pid[at] = '\0';
  for (int attempt = 0; attempt < 16; ++attempt) {
    char path[4200];
    int n = attempt == 0
                ? std::snprintf(path, sizeof path, "%s/instrument-%s.bin", g_dir, pid)
                : std::snprintf(path, sizeof path, "%s/instrument-%s.%d.bin", g_dir, pid, attempt);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof path) return false;
    if (access(path, F_OK) == 0) continue;
    auto writer = format::SpoolWriter::open(path);
    if (!writer.ok()) return false;
    *g_writer = std::move(writer.value());
    return true;
  }
  return false;
}

STRATA_NO_INSTRUMENT void register_buffer(ThreadBuffer* b) {
  b->slot = kMaxThreads;
  for (uint32_t i = 0; i < kMaxThreads; ++i) {
    ThreadBuffer* expected = nullptr;
    if (g_threads[i].compare_exchange_strong(expected, b, std::memory_order_acq_rel)) {
      b->slot = i;
      return;
    }
  }
}

STRATA_NO_INSTRUMENT ThreadBuffer* allocate_buffer() {
  void* mem = mmap(nullptr, sizeof(ThreadBuffer), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) return nullptr;
  auto* b = static_cast<ThreadBuffer*>(mem);  // zero-filled: count 0, name ""
  b->tid = current_tid();
  register_buffer(b);
  t_buffer = b;
  // Only the key's destructor runs at thread exit; its value is the buffer.
  pthread_setspecific(g_key, b);
  return b;
}

STRATA_NO_INSTRUMENT void release_buffer(ThreadBuffer* b) {
  if (b->slot < kMaxThreads) g_threads[b->slot].store(nullptr, std::memory_order_release);
  if (t_buffer == b) t_buffer = nullptr;
  munmap(b, sizeof(ThreadBuffer));
}

// Waits until no other thread is flushing; `self` is 1 when the caller is
// itself counted in g_flushers.
STRATA_NO_INSTRUMENT bool drain_flushers(int self, int64_t timeout_ns) {
  int64_t deadline = monotonic_ns() + timeout_ns;
  while (g_flushers.load(std::memory_order_seq_cst) > self) {
    if (monotonic_ns() > deadline) return false;
    sched_yield();
  }
  return true;
}

// Stops recording and writes everything still buffered, then the end marker.
// Runs on the exiting thread (signal == 0) or in a fatal-signal handler.
STRATA_NO_INSTRUMENT void finish(uint32_t signal) {
  uint8_t on = kOn;
  if (!g_state.compare_exchange_strong(on, kOff, std::memory_order_seq_cst)) return;
  bool in_slow = t_in_slow;
  t_in_slow = true;
  if (!drain_flushers(in_slow ? 1 : 0, signal ? kDrainSignalNs : kDrainExitNs)) {
    // A flush still in progress may append after a close: leave the fd to
    // the kernel. The spool then reads as a crash, with its data intact.
    return;
  }
  ThreadBuffer* own = t_buffer;
  if (own != nullptr && !in_slow) {
    write_events(own, own->count.load(std::memory_order_relaxed));
    own->count.store(0, std::memory_order_relaxed);
    own->last = 0;
    write_own_name(own);
  }
  for (auto& slot : g_threads) {
    ThreadBuffer* b = slot.load(std::memory_order_acquire);
    if (b == nullptr || b == own) continue;
    write_events(b, b->count.load(std::memory_order_acquire));
    write_other_name(b);
  }
  write_memory_map();
  write_drop_counters();
  g_writer->close(signal);
}

STRATA_NO_INSTRUMENT void on_exit() {
  if (getpid() == g_owner_pid) finish(0);
}

STRATA_NO_INSTRUMENT void on_fatal_signal(int sig, siginfo_t*, void*) {
  int saved_errno = errno;
  finish(static_cast<uint32_t>(sig));
  // Put the previous disposition back and let it act: the signal is blocked
  // while this handler runs, so the raise is delivered on return (and a
  // fault re-executes the faulting instruction), as if strata was not there.
  for (size_t i = 0; i < sizeof kFatalSignals / sizeof kFatalSignals[0]; ++i) {
    if (kFatalSignals[i] == sig && g_handled[i]) sigaction(sig, &g_old_actions[i], nullptr);
  }
  raise(sig);
  errno = saved_errno;
}

// Only signals the program left at their default disposition are taken: a
// program that handles SIGSEGV itself keeps its handler.
STRATA_NO_INSTRUMENT void install_signal_handlers() {
  for (size_t i = 0; i < sizeof kFatalSignals / sizeof kFatalSignals[0]; ++i) {
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

STRATA_NO_INSTRUMENT void on_thread_exit(void* arg) {
  auto* b = static_cast<ThreadBuffer*>(arg);
  t_in_slow = true;
  if (enter_flusher()) {
    write_events(b, b->count.load(std::memory_order_relaxed));
    write_own_name(b);
    release_buffer(b);
    leave_flusher();
  }
  // Recording stopped: the exit handler may be reading this buffer, so it
  // stays mapped until the process ends.
  t_in_slow = false;
}

// In a forked child: the parent's spool, its other threads and the parent's
// unflushed events are not the child's. The child gets a spool of its own.
STRATA_NO_INSTRUMENT void on_fork_child() {
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
    own->last = 0;
    own->tid = current_tid();
    own->name[0] = '\0';
  }
  g_owner_pid = getpid();
  if (!open_spool()) {
    g_state.store(kOff, std::memory_order_relaxed);
    return;
  }
  format::append_own_process_info(*g_writer);
  write_memory_map();
}

// Decides once whether this process records. Returns whether it does.
STRATA_NO_INSTRUMENT bool init() {
  uint8_t expected = kUninit;
  if (!g_state.compare_exchange_strong(expected, kInitializing, std::memory_order_acq_rel)) {
    return expected == kOn;
  }
  const char* dir = std::getenv(format::kInstrumentDirEnv);
  size_t dir_len = dir ? std::strlen(dir) : 0;
  if (dir_len == 0 || dir_len >= sizeof g_dir) {
    g_state.store(kOff, std::memory_order_release);
    return false;
  }
  std::memcpy(g_dir, dir, dir_len + 1);
  const char* clock = std::getenv(format::kInstrumentClockEnv);
  g_use_tsc = tsc_is_invariant() && !(clock && std::strcmp(clock, "monotonic") == 0);
  g_clock = g_use_tsc ? format::InstrumentClock::kTsc : format::InstrumentClock::kMonotonic;
  if (g_use_tsc) clock_pair(&g_ref_ns, &g_ref_ticks);
  g_writer = new (g_writer_storage) format::SpoolWriter();
  g_owner_pid = getpid();
  if (pthread_key_create(&g_key, on_thread_exit) != 0 || !open_spool()) {
    g_state.store(kOff, std::memory_order_release);
    return false;
  }
  format::append_own_process_info(*g_writer);
  write_memory_map();
  pthread_atfork(nullptr, nullptr, on_fork_child);
  std::atexit(on_exit);
  install_signal_handlers();
  g_state.store(kOn, std::memory_order_release);
  return true;
}

STRATA_NO_INSTRUMENT __attribute__((noinline)) void record_slow(void* fn, uint64_t exit_bit) {
  if (t_in_slow) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint8_t state = g_state.load(std::memory_order_acquire);
  if (state != kOn && (state != kUninit || !init())) return;
  auto address = reinterpret_cast<uint64_t>(fn);
  if ((address & ~format::kInstrumentAddressMask) != 0 || address == 0) {
    // Above the 47-bit user range (5-level paging with high mmap hints):
    // not representable in a word.
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  t_in_slow = true;
  const uint64_t slow_start = stamp();
  ThreadBuffer* b = t_buffer;
  if (b == nullptr) {
    b = allocate_buffer();
  } else if (b->count.load(std::memory_order_relaxed) + kSlowWords > kCapacity) {
    if (enter_flusher()) {
      write_events(b, b->count.load(std::memory_order_relaxed));
      b->count.store(0, std::memory_order_relaxed);
      b->last = 0;
      write_own_name(b);
      leave_flusher();
    } else {
      b = nullptr;  // recording stopped while this thread was on its way here
    }
  }
  t_in_slow = false;
  if (b == nullptr) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  b->paused += stamp() - slow_start;
  uint64_t t = stamp() - b->paused;
  uint64_t delta = t - b->last;
  uint32_t n = b->count.load(std::memory_order_relaxed);
  if (b->last == 0 || delta > format::kInstrumentMaxDelta) {
    // A clock record: the marker word, then the absolute stamp.
    b->count.store(n + 3, std::memory_order_relaxed);
    b->words[n] = 0;
    b->words[n + 1] = t;
    b->words[n + 2] = address | exit_bit;
  } else {
    b->count.store(n + 1, std::memory_order_relaxed);
    b->words[n] = address | exit_bit | (delta << format::kInstrumentDeltaShift);
  }
  b->last = t;
}

// The hot path: one rdtsc, one combined range check (buffer room, delta
// within 16 bits, address within 47), one store. The slot is reserved
// before it is filled, so a signal handler running instrumented code in
// between records after the interrupted event instead of overwriting it
// (its times are then off by the handler's duration; counts stay exact).
STRATA_NO_INSTRUMENT __attribute__((always_inline)) inline void record(uint8_t state, void* fn,
                                                                       uint64_t exit_bit) {
  ThreadBuffer* b = t_buffer;
  if (__builtin_expect(state == kOn && b != nullptr, 1)) {
    uint32_t n = b->count.load(std::memory_order_relaxed);
    uint64_t t = stamp() - b->paused;
    uint64_t delta = t - b->last;
    auto address = reinterpret_cast<uint64_t>(fn);
    if (__builtin_expect(n < kCapacity && ((delta & ~format::kInstrumentMaxDelta) |
                                           (address & ~format::kInstrumentAddressMask)) == 0,
                         1)) {
      b->count.store(n + 1, std::memory_order_relaxed);
      b->last = t;
      // No fence: the owner is the only writer, and the exit handler that
      // reads another thread's buffer can at worst see the one slot being
      // filled still stale (docs/instrument.md, Limits).
      b->words[n] = address | exit_bit | (delta << format::kInstrumentDeltaShift);
      return;
    }
  }
  record_slow(fn, exit_bit);
}

}  // namespace
}  // namespace strata::instrument

extern "C" {
void __cyg_profile_func_enter(void* fn, void* call_site);
void __cyg_profile_func_exit(void* fn, void* call_site);
}

namespace strata::instrument {
namespace {

// What one event costs, measured where the program runs (the importer reads
// it back, format/instrument_payloads.h): the entry points are called as an
// instrumented function calls them, through a pointer the compiler cannot
// inline, around an empty "function". A first round takes the slow path's
// one-time costs (the buffer's mmap, the first clock record) out of the
// measured one.
STRATA_NO_INSTRUMENT void calibrate() {
  void (*volatile enter)(void*, void*) = __cyg_profile_func_enter;
  void (*volatile leave)(void*, void*) = __cyg_profile_func_exit;
  auto* outer = reinterpret_cast<void*>(format::kInstrumentCalibrationOuter);
  auto* inner = reinterpret_cast<void*>(format::kInstrumentCalibrationInner);
  for (uint32_t i = 0; i < 64; ++i) {
    enter(inner, nullptr);
    leave(inner, nullptr);
  }
  enter(outer, nullptr);
  for (uint32_t i = 0; i < format::kInstrumentCalibrationCalls; ++i) {
    enter(inner, nullptr);
    leave(inner, nullptr);
  }
  leave(outer, nullptr);
}

// Decides before main whether to record, so the spool exists (with the
// process info and maps) even for a program that calls no instrumented code.
__attribute__((constructor(101))) STRATA_NO_INSTRUMENT void init_at_load() {
  if (init()) calibrate();
}

}  // namespace
}  // namespace strata::instrument

extern "C" {

__attribute__((visibility("default"))) STRATA_NO_INSTRUMENT void __cyg_profile_func_enter(
    void* fn, void* /*call_site*/) {
  using namespace strata::instrument;
  uint8_t state = g_state.load(std::memory_order_relaxed);
  if (__builtin_expect(state == kOff, 1)) return;
  record(state, fn, 0);
}

__attribute__((visibility("default"))) STRATA_NO_INSTRUMENT void __cyg_profile_func_exit(
    void* fn, void* /*call_site*/) {
  using namespace strata::instrument;
  uint8_t state = g_state.load(std::memory_order_relaxed);
  if (__builtin_expect(state == kOff, 1)) return;
  record(state, fn, strata::format::kInstrumentExitBit);
}

}  // extern "C"
