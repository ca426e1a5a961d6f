// libstrata_sigprof.so: the in-process CPU sampler strata falls back to
// where perf_event_open is refused (docs/sampler-fallback.md). Loaded with
// LD_PRELOAD; inert unless STRATA_SIGPROF_DIR is set.
//
// Sampling: one POSIX timer per thread on CLOCK_THREAD_CPUTIME_ID, delivered
// to that thread (SIGEV_THREAD_ID) as SIGPROF. The main thread gets its timer
// in the constructor, later threads in a wrapper start routine installed by
// our pthread_create. The handler copies the interrupted registers from the
// ucontext and the stack from sp upwards into the thread's own preallocated
// buffer; the CLI unwinds the copies offline with the same DWARF unwinder as
// perf samples, so the handler never walks the stack, never calls the loader
// (dl_iterate_phdr and the unwinders that use it take the loader lock:
// gperftools#775) and never allocates.
//
// Threading and signals: each thread's slot is guarded by `busy`, a flag the
// handler only ever try-locks (a sample that finds it taken is dropped and
// counted), while the non-signal paths (thread start and exit, process exit,
// fork) spin on it briefly. So a handler never waits, and a non-signal path
// waits only for a handler or another short non-signal path on another
// thread. Flushes are whole chunks appended with SpoolWriter, whose appends
// are async-signal-safe and land whole on the O_APPEND spool, so threads
// flush independently, from the handler when their buffer is full or its
// oldest sample is kFlushIntervalNs old.
// Allocation: buffers are mmap'd at thread start and unmapped at thread exit,
// outside any handler. Slots are a static table: no state is ever freed
// while a handler on another thread could look at it.
// Fork: the child (atfork) discards the other threads' state, opens a spool
// of its own and re-arms a timer for the forking thread (timers are not
// inherited). Exec: the new image loads this library again and opens a new
// spool under the same pid (sigprof-PID.1.bin).
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "common/clock.h"
#include "format/byte_order.h"
#include "format/own_process.h"
#include "format/sampler_payloads.h"
#include "format/spool_writer.h"
#include "sampler/inprocess/sigprof_env.h"

namespace {

namespace sp = strata::sampler::sigprof;
namespace wire = strata::format;
using strata::format::ChunkKind;
using strata::format::SpoolWriter;
using strata::format::store_le32;
using strata::format::store_le64;

// Threads sampled at once. A slot is reused once its thread has exited; a
// thread that finds the table full runs unsampled and is counted.
constexpr int kMaxThreads = 4096;
// A buffer's oldest sample goes out within this much CPU time of the thread:
// what a SIGKILL or _exit can lose at most.
constexpr int64_t kFlushIntervalNs = 50'000'000;
constexpr size_t kMinBufferBytes = 256 << 10;
// Bounded spin of a non-signal path on a slot (a handler holds it for a few
// microseconds; this is seconds of yields): past it the slot is left alone.
constexpr int kMaxLockSpins = 1 << 20;

struct ThreadSlot {
  std::atomic<int> claimed{0};
  std::atomic<int> busy{0};
  pid_t tid = 0;
  bool has_timer = false;
  timer_t timer{};
  uintptr_t stack_lo = 0;
  uintptr_t stack_hi = 0;
  uint8_t* buffer = nullptr;  // mmap'd, capacity bytes; null: no sampling
  size_t capacity = 0;
  size_t fill = 0;  // sample bytes after the record prefix
  uint32_t count = 0;
  int64_t first_time = 0;  // of the oldest buffered sample
};

ThreadSlot g_slots[kMaxThreads];
std::atomic<int> g_slots_high{0};  // slots below this index have been used

std::atomic<bool> g_enabled{false};
std::atomic<bool> g_closing{false};
std::atomic<uint64_t> g_counters[wire::kNumSamplerCounters];
std::atomic<int> g_last_adds{-1};

uint32_t g_hz = sp::kDefaultHz;
uint32_t g_stack_bytes = sp::kDefaultStackBytes;
int64_t g_period_ns = 1'000'000;
size_t g_buffer_bytes = kMinBufferBytes;
pthread_key_t g_key;
struct sigaction g_previous {};
std::string* g_dir = nullptr;

// Never destroyed: the final flush runs from an ELF destructor, after the
// C++ static destructors of this library would have closed it.
alignas(SpoolWriter) unsigned char g_writer_storage[sizeof(SpoolWriter)];
SpoolWriter* g_writer = nullptr;

__thread ThreadSlot* t_slot __attribute__((tls_model("initial-exec"))) = nullptr;

void count(wire::SamplerCounter c, uint64_t n = 1) {
  g_counters[c].fetch_add(n, std::memory_order_relaxed);
}

pid_t current_tid() {
  return static_cast<pid_t>(syscall(SYS_gettid));
}

void say(const char* message) {
  (void)!write(STDERR_FILENO, "strata: in-process sampler: ", 28);
  (void)!write(STDERR_FILENO, message, strlen(message));
  (void)!write(STDERR_FILENO, "\n", 1);
}

bool lock_slot(ThreadSlot* slot) {
  for (int i = 0; i < kMaxLockSpins; ++i) {
    if (slot->busy.exchange(1, std::memory_order_acquire) == 0) return true;
    sched_yield();
  }
  return false;
}
void unlock_slot(ThreadSlot* slot) {
  slot->busy.store(0, std::memory_order_release);
}

// Writes the slot's buffered samples as one record. Caller holds busy.
void flush_slot(ThreadSlot* slot) {
  if (slot->count == 0 || slot->buffer == nullptr) return;
  uint8_t* p = slot->buffer;
  store_le32(p, static_cast<uint32_t>(slot->tid));
  store_le32(p + 4, slot->count);
  if (!g_writer->append(ChunkKind::kSamplerSamples, p, wire::kSamplerSamplesPrefix + slot->fill)) {
    count(wire::kFlushFailures);
  }
  slot->fill = 0;
  slot->count = 0;
}

// Copies raw stack bytes. Below the live frames they include the redzones of
// frames that have returned, which ASan keeps poisoned and its memcpy
// interceptor would report; reading them is the point (perf copies the same
// bytes), so a sanitized build copies without instrumentation. Other builds
// use memcpy.
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address)) void copy_raw_stack(uint8_t* out, uint64_t from, size_t n) {
  const volatile uint8_t* in = reinterpret_cast<const volatile uint8_t*>(from);
  for (size_t i = 0; i < n; ++i) out[i] = in[i];
}
#else
void copy_raw_stack(uint8_t* out, uint64_t from, size_t n) {
  memcpy(out, reinterpret_cast<const void*>(from), n);
}
#endif

// Copies up to g_stack_bytes from sp. Inside the stack found at thread start
// a plain copy is safe; elsewhere (sigaltstack, coroutine or green-thread
// stacks) process_vm_readv on ourselves reads what is mapped and fails
// cleanly on what is not, where memcpy would fault.
size_t copy_stack(const ThreadSlot* slot, uint64_t sp_value, uint8_t* out) {
  if (sp_value >= slot->stack_lo && sp_value < slot->stack_hi) {
    size_t n = slot->stack_hi - sp_value;
    if (n > g_stack_bytes) n = g_stack_bytes;
    copy_raw_stack(out, sp_value, n);
    return n;
  }
  iovec local{out, g_stack_bytes};
  iovec remote{reinterpret_cast<void*>(sp_value), g_stack_bytes};
  ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (n <= 0) {
    count(wire::kStackCopyFailures);
    return 0;
  }
  return static_cast<size_t>(n);
}

// Caller holds busy and slot->buffer is set.
void record_sample(ThreadSlot* slot, const siginfo_t* info, const ucontext_t* uc) {
  const size_t max_sample = wire::kSamplerSampleHeader + g_stack_bytes;
  if (slot->capacity - wire::kSamplerSamplesPrefix - slot->fill < max_sample) flush_slot(slot);
  const greg_t* g = uc->uc_mcontext.gregs;
  // Ascending perf register numbers: BX(1) BP(6) SP(7) IP(8) R12-R15(20-23).
  const uint64_t regs[wire::kSamplerRegsPerSample] = {
      static_cast<uint64_t>(g[REG_RBX]), static_cast<uint64_t>(g[REG_RBP]),
      static_cast<uint64_t>(g[REG_RSP]), static_cast<uint64_t>(g[REG_RIP]),
      static_cast<uint64_t>(g[REG_R12]), static_cast<uint64_t>(g[REG_R13]),
      static_cast<uint64_t>(g[REG_R14]), static_cast<uint64_t>(g[REG_R15])};
  uint8_t* out = slot->buffer + wire::kSamplerSamplesPrefix + slot->fill;
  const size_t stack_size = copy_stack(slot, regs[2], out + wire::kSamplerSampleHeader);
  const int64_t now = strata::monotonic_ns();
  const uint32_t overruns = info->si_overrun > 0 ? static_cast<uint32_t>(info->si_overrun) : 0;
  store_le64(out + wire::sampler_sample_offset::kTime, static_cast<uint64_t>(now));
  store_le32(out + wire::sampler_sample_offset::kOverruns, overruns);
  store_le32(out + wire::sampler_sample_offset::kStackSize, static_cast<uint32_t>(stack_size));
  for (int i = 0; i < wire::kSamplerRegsPerSample; ++i) {
    store_le64(out + wire::sampler_sample_offset::kRegs + 8 * i, regs[i]);
  }
  size_t size = wire::kSamplerSampleHeader + stack_size;
  size_t padded = (size + 7) & ~size_t{7};
  memset(out + size, 0, padded - size);
  if (slot->count == 0) slot->first_time = now;
  slot->fill += padded;
  slot->count++;
  count(wire::kSamplesTaken);
  if (overruns) count(wire::kTimerOverruns, overruns);
  if (slot->capacity - wire::kSamplerSamplesPrefix - slot->fill < max_sample ||
      now - slot->first_time >= kFlushIntervalNs) {
    flush_slot(slot);
  }
}

// A SIGPROF that is not one of our timers' (kill -PROF, setitimer in the
// program): hand it to the handler that was installed before ours, if any.
void forward_foreign(int sig, siginfo_t* info, void* context) {
  count(wire::kForeignSignals);
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  }
}

void on_sigprof(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  ThreadSlot* slot = t_slot;
  if (info == nullptr || info->si_code != SI_TIMER || slot == nullptr ||
      info->si_value.sival_ptr != slot) {
    forward_foreign(sig, info, context);
  } else if (slot->busy.exchange(1, std::memory_order_acquire) != 0) {
    count(wire::kSamplesDropped);
  } else {
    if (slot->buffer != nullptr) {
      record_sample(slot, info, static_cast<const ucontext_t*>(context));
    } else {
      count(wire::kSamplesDropped);
    }
    unlock_slot(slot);
  }
  errno = saved_errno;
}

// /proc/self/maps (format/own_process.h: no malloc, also used after fork).
void write_maps() {
  wire::append_own_memory_map(*g_writer);
}

int count_adds(dl_phdr_info* info, size_t, void* data) {
  *static_cast<int*>(data) = static_cast<int>(info->dlpi_adds);
  return 1;
}

// Safe points (thread start and exit, never a handler) re-read the maps when
// the loader has loaded something since the last snapshot: dlopen'd
// libraries then symbolize even if the process dies before its exit
// snapshot.
void snapshot_maps_if_changed() {
  int adds = -1;
  dl_iterate_phdr(count_adds, &adds);
  if (adds >= 0 && g_last_adds.exchange(adds) != adds) write_maps();
}

void write_counters() {
  unsigned char record[wire::kSamplerCountersPrefix + 8 * wire::kNumSamplerCounters];
  store_le32(record, g_hz);
  store_le32(record + 4, g_stack_bytes);
  for (int i = 0; i < wire::kNumSamplerCounters; ++i) {
    store_le64(record + wire::kSamplerCountersPrefix + 8 * i,
               g_counters[i].load(std::memory_order_relaxed));
  }
  g_writer->append(ChunkKind::kSamplerCounters, record, sizeof record);
}

// The name of a thread: prctl for ourselves, /proc for another thread.
void write_thread_name(pid_t tid) {
  char name[64] = {};
  size_t len = 0;
  if (tid == current_tid()) {
    if (prctl(PR_GET_NAME, name) == 0) len = strnlen(name, 16);
  } else {
    char path[64];
    // No snprintf: this also runs in the atfork child of a threaded parent.
    strcpy(path, "/proc/self/task/");
    char digits[16];
    int n = 0;
    for (unsigned v = static_cast<unsigned>(tid); n == 0 || v; v /= 10) digits[n++] = '0' + v % 10;
    size_t at = strlen(path);
    while (n) path[at++] = digits[--n];
    strcpy(path + at, "/comm");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t got = read(fd, name, sizeof name - 1);
      if (got > 0) len = static_cast<size_t>(got);
      close(fd);
    }
    while (len > 0 && name[len - 1] == '\n') --len;
  }
  if (len > 0)
    g_writer->append_thread_name(static_cast<uint32_t>(tid), std::string_view(name, len));
}

bool arm_timer(ThreadSlot* slot, pid_t tid) {
  sigevent sev{};
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGPROF;
  sev.sigev_value.sival_ptr = slot;
  sev._sigev_un._tid = tid;
  timer_t timer;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) != 0) return false;
  if (!lock_slot(slot)) {
    timer_delete(timer);
    return false;
  }
  slot->timer = timer;
  slot->has_timer = true;
  unlock_slot(slot);
  itimerspec spec{};
  spec.it_interval.tv_sec = g_period_ns / 1'000'000'000;
  spec.it_interval.tv_nsec = g_period_ns % 1'000'000'000;
  spec.it_value = spec.it_interval;
  return timer_settime(timer, 0, &spec, nullptr) == 0;
}

ThreadSlot* claim_slot() {
  for (int i = 0; i < kMaxThreads; ++i) {
    int expected = 0;
    if (g_slots[i].claimed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      int high = g_slots_high.load(std::memory_order_relaxed);
      while (high < i + 1 && !g_slots_high.compare_exchange_weak(high, i + 1)) {
      }
      return &g_slots[i];
    }
  }
  return nullptr;
}

// Starts sampling the calling thread. Not in a handler.
void attach_thread() {
  if (!g_enabled.load(std::memory_order_acquire) || t_slot != nullptr) return;
  uintptr_t lo = 0;
  uintptr_t hi = 0;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      lo = reinterpret_cast<uintptr_t>(addr);
      hi = lo + size;
    }
    pthread_attr_destroy(&attr);
  }
  void* mem =
      mmap(nullptr, g_buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ThreadSlot* slot = mem == MAP_FAILED ? nullptr : claim_slot();
  if (slot == nullptr || !lock_slot(slot)) {
    if (mem != MAP_FAILED) munmap(mem, g_buffer_bytes);
    if (slot) slot->claimed.store(0, std::memory_order_release);
    count(wire::kThreadsUnsampled);
    return;
  }
  if (g_closing.load(std::memory_order_acquire)) {
    unlock_slot(slot);
    slot->claimed.store(0, std::memory_order_release);
    munmap(mem, g_buffer_bytes);
    return;
  }
  const pid_t tid = current_tid();
  slot->tid = tid;
  slot->has_timer = false;
  slot->stack_lo = lo;
  slot->stack_hi = hi;
  slot->buffer = static_cast<uint8_t*>(mem);
  slot->capacity = g_buffer_bytes;
  slot->fill = 0;
  slot->count = 0;
  t_slot = slot;
  unlock_slot(slot);
  pthread_setspecific(g_key, slot);
  if (arm_timer(slot, tid)) {
    count(wire::kThreadsSampled);
  } else {
    count(wire::kThreadsUnsampled);
  }
  write_thread_name(tid);
}

// Stops sampling a slot's thread and writes what it holds. From the thread
// itself (its exit) or from process exit for every thread still running.
void retire_slot(ThreadSlot* slot) {
  if (!lock_slot(slot)) return;
  if (slot->has_timer) timer_delete(slot->timer);
  slot->has_timer = false;
  flush_slot(slot);
  if (slot->buffer) write_thread_name(slot->tid);
  uint8_t* buffer = slot->buffer;
  slot->buffer = nullptr;
  unlock_slot(slot);
  // No handler reads the buffer once it is null under busy.
  if (buffer) munmap(buffer, slot->capacity);
}

// pthread key destructor: the thread is exiting (return or pthread_exit).
void detach_thread(void* value) {
  auto* slot = static_cast<ThreadSlot*>(value);
  sigset_t prof;
  sigset_t old;
  sigemptyset(&prof);
  sigaddset(&prof, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &prof, &old);
  retire_slot(slot);
  t_slot = nullptr;
  slot->claimed.store(0, std::memory_order_release);
  if (!g_closing.load(std::memory_order_acquire)) snapshot_maps_if_changed();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

bool open_spool() {
  const std::string base = *g_dir + "/sigprof-" + std::to_string(getpid());
  // An exec keeps the pid: the new image writes a spool of its own.
  for (int n = 0; n < 64; ++n) {
    std::string path = base + (n == 0 ? "" : "." + std::to_string(n)) + ".bin";
    if (access(path.c_str(), F_OK) == 0) continue;
    auto writer = SpoolWriter::open(path);
    if (!writer.ok()) {
      say(writer.error().message.c_str());
      return false;
    }
    *g_writer = std::move(writer).value();
    return true;
  }
  say("no free spool name");
  return false;
}

void start_process_spool() {
  wire::append_own_process_info(*g_writer);
  write_maps();
  g_last_adds.store(-1);
}

void on_fork_child() {
  if (!g_enabled.load(std::memory_order_acquire)) return;
  // Only the forking thread exists here, and no timer: nothing can signal.
  ThreadSlot* self = t_slot;
  const int high = g_slots_high.load(std::memory_order_relaxed);
  for (int i = 0; i < high; ++i) {
    ThreadSlot* slot = &g_slots[i];
    slot->busy.store(0, std::memory_order_relaxed);
    slot->has_timer = false;
    if (slot == self) continue;
    if (slot->buffer) munmap(slot->buffer, slot->capacity);
    slot->buffer = nullptr;
    slot->claimed.store(0, std::memory_order_relaxed);
  }
  for (auto& c : g_counters) c.store(0, std::memory_order_relaxed);
  if (!open_spool()) {
    g_enabled.store(false);
    if (self) self->buffer = nullptr;
    return;
  }
  start_process_spool();
  if (self && self->buffer) {
    // The buffered samples are the parent's, which flushes its own copy.
    self->fill = 0;
    self->count = 0;
    self->tid = current_tid();
    if (arm_timer(self, self->tid)) count(wire::kThreadsSampled);
  }
}

uint32_t env_u32(const char* name, uint32_t fallback, uint32_t lo, uint32_t hi) {
  const char* text = getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  unsigned long v = strtoul(text, &end, 10);
  if (*end != '\0' || v < lo || v > hi) return fallback;
  return static_cast<uint32_t>(v);
}

__attribute__((constructor)) void sigprof_init() {
  const char* dir = getenv(sp::kEnvDir);
  if (!dir || !*dir) return;
  g_hz = env_u32(sp::kEnvHz, sp::kDefaultHz, 1, 100000);
  g_stack_bytes =
      env_u32(sp::kEnvStackBytes, sp::kDefaultStackBytes, 0, wire::kSamplerMaxStackBytes) & ~7u;
  g_period_ns = 1'000'000'000 / g_hz;
  const size_t max_sample = wire::kSamplerSampleHeader + g_stack_bytes;
  g_buffer_bytes = kMinBufferBytes;
  while (g_buffer_bytes < wire::kSamplerSamplesPrefix + 4 * max_sample) g_buffer_bytes *= 2;
  g_dir = new std::string(dir);
  g_writer = new (g_writer_storage) SpoolWriter();
  if (!open_spool()) return;
  start_process_spool();

  if (pthread_key_create(&g_key, detach_thread) != 0) {
    say("pthread_key_create failed");
    g_writer->close();
    return;
  }
  struct sigaction sa {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, &g_previous) != 0) {
    say("cannot install the SIGPROF handler");
    g_writer->close();
    return;
  }
  pthread_atfork(nullptr, nullptr, on_fork_child);
  g_enabled.store(true, std::memory_order_release);
  attach_thread();
}

__attribute__((destructor)) void sigprof_fini() {
  if (!g_enabled.exchange(false)) return;
  g_closing.store(true, std::memory_order_release);
  struct sigaction current {};
  if (sigaction(SIGPROF, nullptr, &current) == 0 &&
      !((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigprof)) {
    g_counters[wire::kHandlerReplaced].store(1, std::memory_order_relaxed);
  }
  const int high = g_slots_high.load(std::memory_order_acquire);
  for (int i = 0; i < high; ++i) {
    if (g_slots[i].claimed.load(std::memory_order_acquire)) retire_slot(&g_slots[i]);
  }
  write_maps();
  write_counters();
  g_writer->close();
}

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

struct StartRoutine {
  void* (*start)(void*);
  void* arg;
};

void* start_sampled(void* p) {
  StartRoutine routine = *static_cast<StartRoutine*>(p);
  free(p);
  attach_thread();
  snapshot_maps_if_changed();
  return routine.start(routine.arg);
}

PthreadCreate real_pthread_create() {
  static std::atomic<PthreadCreate> real{nullptr};
  PthreadCreate fn = real.load(std::memory_order_acquire);
  if (!fn) {
    fn = reinterpret_cast<PthreadCreate>(dlsym(RTLD_NEXT, "pthread_create"));
    real.store(fn, std::memory_order_release);
  }
  return fn;
}

}  // namespace

// Interposes on libc's pthread_create (exported by the version script) to
// start each new thread through start_sampled, which arms its timer.
extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                                     const pthread_attr_t* attr,
                                                                     void* (*start)(void*),
                                                                     void* arg) {
  PthreadCreate real = real_pthread_create();
  if (real == nullptr) return EAGAIN;
  if (!g_enabled.load(std::memory_order_acquire)) return real(thread, attr, start, arg);
  auto* routine = static_cast<StartRoutine*>(malloc(sizeof(StartRoutine)));
  if (routine == nullptr) return real(thread, attr, start, arg);
  routine->start = start;
  routine->arg = arg;
  int rc = real(thread, attr, start_sampled, routine);
  if (rc != 0) free(routine);
  return rc;
}
