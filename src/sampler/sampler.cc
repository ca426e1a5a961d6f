#include "sampler/sampler.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "common/clock.h"
#include "common/process.h"
#include "common/signal_forwarder.h"
#include "common/strings.h"
#include "sampler/profile_builder.h"

namespace strata::sampler {

const char* stack_mode_name(StackMode mode) {
  return mode == StackMode::kDwarf ? "dwarf" : "fp";
}

std::span<const uint64_t> RawProfile::regs_of(const Sample& s) const {
  if (s.regs_abi == 0 || regs_per_sample == 0) return {};
  const uint64_t at = s.regs_index * regs_per_sample;
  if (at + regs_per_sample > regs.size()) return {};
  return std::span<const uint64_t>(regs).subspan(at, regs_per_sample);
}

std::span<const uint8_t> RawProfile::stack_of(const Sample& s) const {
  if (s.stack_offset + s.stack_size > stacks.size()) return {};
  return std::span<const uint8_t>(stacks).subspan(s.stack_offset, s.stack_size);
}

std::span<const uint64_t> RawProfile::callchain_of(const Sample& s) const {
  if (s.callchain_offset + s.callchain_size > callchains.size()) return {};
  return std::span<const uint64_t>(callchains).subspan(s.callchain_offset, s.callchain_size);
}

std::span<const PythonFrameRead> RawProfile::python_stack_of(const Sample& s) const {
  if (s.python_offset + s.python_size > python_frames.size()) return {};
  return std::span<const PythonFrameRead>(python_frames).subspan(s.python_offset, s.python_size);
}

std::optional<uint64_t> RawProfile::reg(const Sample& s, int perf_reg) const {
  if (perf_reg < 0 || perf_reg >= 64 || !(regs_mask & (1ull << perf_reg))) return std::nullopt;
  auto r = regs_of(s);
  if (r.empty()) return std::nullopt;
  // Registers are stored in increasing bit order: the index is the number of
  // mask bits below this one.
  const int index = std::popcount(regs_mask & ((1ull << perf_reg) - 1));
  return r[static_cast<size_t>(index)];
}

std::vector<int> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return cpus;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    int lo = 0;
    int hi = 0;
    size_t dash = item.find('-');
    auto parse = [](std::string_view s, int& out) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      return ec == std::errc() && p == s.data() + s.size() && !s.empty() && out >= 0;
    };
    if (dash == std::string_view::npos) {
      if (!parse(item, lo)) return {};
      hi = lo;
    } else if (!parse(item.substr(0, dash), lo) || !parse(item.substr(dash + 1), hi) || hi < lo ||
               hi - lo > 1 << 16) {
      return {};
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return cpus;
}

namespace {

std::string read_small_file(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

long perf_event_open(perf_event_attr* attr, pid_t pid, int cpu) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

// One per-CPU event fd and its mmap'd ring. Threading: used by one thread.
class PerfRing {
 public:
  PerfRing() = default;
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;
  ~PerfRing() {
    if (base_) munmap(base_, map_size_);
    if (fd_ >= 0) close(fd_);
  }

  int fd() const { return fd_; }
  void set_fd(int fd) { fd_ = fd; }

  // Maps 1 + data_pages pages; on EPERM (mlock limit) halves data_pages down
  // to kMinRingPages. Returns 0 or the errno of the last failure.
  int map(uint32_t& data_pages) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    for (;;) {
      map_size_ = page * (1 + data_pages);
      void* p = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
      if (p != MAP_FAILED) {
        base_ = p;
        auto* meta = static_cast<perf_event_mmap_page*>(base_);
        // data_offset/data_size exist since Linux 4.1; before, the data area
        // follows the first page.
        data_offset_ = meta->data_offset ? meta->data_offset : page;
        data_size_ = meta->data_size ? meta->data_size : page * data_pages;
        return 0;
      }
      const int err = errno;
      if (err != EPERM || data_pages <= kMinRingPages) return err;
      data_pages /= 2;
    }
  }

  // Hands what the kernel has written to `consume` (parsed in place where it
  // does not wrap), then releases the space. Returns false if the positions
  // were inconsistent (the unread data is then dropped).
  template <typename Consume>
  bool drain(std::vector<uint8_t>& scratch, Consume&& consume) {
    if (!base_) return true;
    auto* meta = static_cast<perf_event_mmap_page*>(base_);
    // Acquire pairs with the kernel's store of data_head after writing the
    // records (the kernel documents an smp_rmb after reading data_head).
    const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    const uint64_t tail = meta->data_tail;  // only we write it
    if (head == tail) return true;
    const auto* data = static_cast<const uint8_t*>(base_) + data_offset_;
    auto bytes = view_ring(data, data_size_, tail, head, scratch);
    if (bytes) consume(*bytes);
    // Release: our reads of the records happen before the kernel may reuse
    // the space.
    __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
    return bytes.has_value();
  }

 private:
  int fd_ = -1;
  void* base_ = nullptr;
  size_t map_size_ = 0;
  uint64_t data_offset_ = 0;
  uint64_t data_size_ = 0;
};

constexpr const char* kPerfMapDir = "/tmp";

std::string perf_map_path(uint32_t pid) {
  return std::string(kPerfMapDir) + "/perf-" + std::to_string(pid) + ".map";
}

// The pids of the perf-PID.map files in /tmp now.
std::set<uint32_t> existing_perf_maps() {
  std::set<uint32_t> pids;
  DIR* dir = opendir(kPerfMapDir);
  if (!dir) return pids;
  while (const dirent* e = readdir(dir)) {
    std::string_view name = e->d_name;
    if (name.size() <= 9 || name.substr(0, 5) != "perf-" || !name.ends_with(".map")) continue;
    std::string_view digits = name.substr(5, name.size() - 9);
    uint32_t pid = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (ec == std::errc() && end == digits.data() + digits.size()) pids.insert(pid);
  }
  closedir(dir);
  return pids;
}

// Notes the perf maps of sampled processes that import will not read
// (build_profile's read_python_perf_maps decides again when it opens them;
// this is so that a refusal is said, not silent).
void note_foreign_perf_maps(RawProfile& profile) {
  std::set<uint32_t> pids;
  for (const auto& [pid, maps] : profile.mmaps) pids.insert(pid);
  for (uint32_t pid : pids) {
    const std::string path = perf_map_path(pid);
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) continue;
    std::string why;
    auto uid = profile.uids.find(pid);
    const uint32_t owner = uid != profile.uids.end() ? uid->second : geteuid();
    if (profile.perf_maps_before.count(pid)) {
      why = "it existed before the run";
    } else if (!S_ISREG(st.st_mode)) {
      why = "not a regular file";
    } else if (st.st_uid != owner) {
      why = "owned by uid " + std::to_string(st.st_uid) + ", not the target's (uid " +
            std::to_string(owner) + ")";
    }
    if (!why.empty()) {
      profile.notes.push_back("perf map '" + path + "': " + why + "; not read, not removed");
    }
  }
}

Error fail(SampleErrorKind* kind, SampleErrorKind k, std::string message) {
  if (kind) *kind = k;
  return make_error(std::move(message));
}

std::string paranoid_value() {
  std::string v = trimmed(read_small_file("/proc/sys/kernel/perf_event_paranoid"));
  return v.empty() ? "unknown" : v;
}

bool is_unavailable_errno(int err) {
  return err == EACCES || err == EPERM || err == ENOSYS || err == ENOENT || err == EOPNOTSUPP;
}

std::string open_error_message(int err) {
  if (err == EACCES || err == EPERM) {
    return "perf_event_open refused: " + errno_text(err) + "; kernel.perf_event_paranoid is " +
           paranoid_value() +
           " (sampling your own processes needs <= 2, or CAP_PERFMON; a container's seccomp "
           "filter can refuse it too)";
  }
  if (err == ENOSYS) return "perf_event_open is not available in this kernel: " + errno_text(err);
  return "the cpu-clock sampling event is not supported here: perf_event_open: " + errno_text(err);
}

Status validate(const SamplerOptions& o) {
  if (o.frequency_hz == 0 || o.frequency_hz > 1'000'000) {
    return make_error("sampling frequency must be 1..1000000 Hz, got " +
                      std::to_string(o.frequency_hz));
  }
  if (o.mode == StackMode::kDwarf) {
#if !defined(__x86_64__)
    return make_error("dwarf stack mode supports x86-64 only; use fp mode");
#endif
    if (o.stack_bytes == 0 || o.stack_bytes % 8 != 0 || o.stack_bytes > 65528) {
      return make_error("user stack copy size must be a multiple of 8 in 8..65528 bytes, got " +
                        std::to_string(o.stack_bytes));
    }
    if (o.regs_mask == 0) return make_error("dwarf mode needs a non-empty register mask");
  }
  if (!std::has_single_bit(o.ring_data_pages) || o.ring_data_pages < kMinRingPages) {
    return make_error("ring buffer pages must be a power of two >= " +
                      std::to_string(kMinRingPages) + ", got " + std::to_string(o.ring_data_pages));
  }
  return Ok{};
}

perf_event_attr make_attr(const SamplerOptions& o, uint64_t ring_bytes) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  // A fixed period rather than freq=1: for cpu-clock the kernel turns a
  // frequency into the period 1e9/freq ns itself at open
  // (perf_swevent_init_hrtimer, kernel/events/core.c, Linux 3.x-6.18), so the
  // period is exact either way; opening it explicitly keeps every sample's
  // PERIOD equal to its weight in ns and skips the frequency checks.
  attr.sample_period = 1'000'000'000ull / o.frequency_hz;
  attr.sample_type =
      PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  if (o.mode == StackMode::kDwarf) {
    attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = o.regs_mask;
    attr.sample_stack_user = o.stack_bytes;
  } else {
    attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
    attr.exclude_callchain_kernel = 1;
  }
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.sample_id_all = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.build_id = o.mmap_build_id ? 1 : 0;
  // Wake the poller when half the ring is full (the kernel's own default, and
  // perf record's): at the CLI's 4 kHz with 16 KiB stacks one busy thread
  // writes ~64 MB/s, so a 512 KiB ring fills in ~8 ms and the poller, woken
  // at ~4 ms, has as long again before anything is lost (-m makes it larger). Each wakeup preempts
  // a thread of the target on a busy machine: fewer is cheaper.
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<uint32_t>(std::max<uint64_t>(ring_bytes / 2, 4096));
  if (o.wake_per_sample) {
    // A Python stack is read from memory when its sample is drained: the
    // sooner, the likelier it is still the stack the sample caught.
    attr.watermark = 0;
    attr.wakeup_events = 1;
  }
  return attr;
}

[[noreturn]] void child_main(const std::vector<std::string>& argv, pid_t parent, int go_fd,
                             int error_fd) {
  // Dies with strata; and the parent's forwarding handlers must not run here
  // (exec would reset them, but the child waits first).
  tie_child_to_parent(parent);
  char go = 0;
  ssize_t n;
  do {
    n = read(go_fd, &go, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) _exit(127);  // the parent gave up (no events): never run the command
  exec_or_report(argv, error_fd);
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

int64_t timeval_ns(const timeval& tv) {
  return int64_t{tv.tv_sec} * 1'000'000'000 + int64_t{tv.tv_usec} * 1'000;
}

// Reaps the child (blocking or not). Returns true once reaped.
bool reap(pid_t pid, bool block, RawProfile& profile) {
  int status = 0;
  rusage usage{};
  pid_t r;
  do {
    r = wait4(pid, &status, block ? 0 : WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  if (r < 0) return true;  // ECHILD: someone else reaped it; nothing more to learn
  if (WIFEXITED(status)) profile.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) profile.signal = WTERMSIG(status);
  profile.user_ns = timeval_ns(usage.ru_utime);
  profile.sys_ns = timeval_ns(usage.ru_stime);
  profile.minor_faults = usage.ru_minflt;
  return true;
}

// The CPUs to open events on: sysfs's online list, else 0..N-1.
std::vector<int> online_cpus() {
  std::vector<int> cpus = parse_cpu_list(read_small_file("/sys/devices/system/cpu/online"));
  if (cpus.empty()) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n; ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

// An empty profile that records what was asked for, with a note when the
// rate is above what the kernel allows.
RawProfile new_profile(const SamplerOptions& options) {
  RawProfile profile;
  profile.mode = options.mode;
  profile.frequency_hz = options.frequency_hz;
  profile.period_ns = 1'000'000'000ull / options.frequency_hz;
  if (options.mode == StackMode::kDwarf) {
    profile.stack_bytes = options.stack_bytes;
    profile.regs_mask = options.regs_mask;
    profile.regs_per_sample = static_cast<uint32_t>(std::popcount(options.regs_mask));
  }
  const std::string max_rate =
      trimmed(read_small_file("/proc/sys/kernel/perf_event_max_sample_rate"));
  if (!max_rate.empty() && std::atoll(max_rate.c_str()) > 0 &&
      options.frequency_hz > static_cast<uint64_t>(std::atoll(max_rate.c_str()))) {
    profile.notes.push_back("sampling at " + std::to_string(options.frequency_hz) +
                            " Hz exceeds kernel.perf_event_max_sample_rate (" + max_rate +
                            "): expect throttling");
  }
  return profile;
}

// A forked child blocked before exec, waiting for the go byte, so that the
// events can be opened on its pid before it runs anything. Ownership: it
// holds the parent's ends of the two pipes until let_exec or abandon.
class StoppedChild {
 public:
  static Result<StoppedChild> start(const std::vector<std::string>& argv) {
    int go_pipe[2];
    int error_pipe[2];
    if (pipe2(go_pipe, O_CLOEXEC) != 0) return make_error("pipe: " + errno_text(errno));
    if (pipe2(error_pipe, O_CLOEXEC) != 0) {
      const int err = errno;
      close(go_pipe[0]);
      close(go_pipe[1]);
      return make_error("pipe: " + errno_text(err));
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      const int err = errno;
      for (int fd : {go_pipe[0], go_pipe[1], error_pipe[0], error_pipe[1]}) close(fd);
      return make_error("fork: " + errno_text(err));
    }
    if (pid == 0) {
      close(go_pipe[1]);
      close(error_pipe[0]);
      child_main(argv, parent, go_pipe[0], error_pipe[1]);
    }
    close(go_pipe[0]);
    close(error_pipe[1]);
    return StoppedChild(pid, go_pipe[1], error_pipe[0]);
  }

  StoppedChild(StoppedChild&& other) noexcept
      : pid_(other.pid_),
        go_fd_(std::exchange(other.go_fd_, -1)),
        error_fd_(std::exchange(other.error_fd_, -1)) {}
  StoppedChild& operator=(StoppedChild&&) = delete;
  ~StoppedChild() {
    close_fd(go_fd_);
    close_fd(error_fd_);
  }

  pid_t pid() const { return pid_; }

  // Sends the go byte; returns 0 once the child has exec'd, or exec's errno.
  int let_exec() {
    const char go = 1;
    ssize_t wrote;
    do {
      wrote = write(go_fd_, &go, 1);
    } while (wrote < 0 && errno == EINTR);
    close_fd(go_fd_);
    int exec_errno = 0;
    ssize_t got;
    do {
      got = read(error_fd_, &exec_errno, sizeof exec_errno);  // EOF: exec succeeded
    } while (got < 0 && errno == EINTR);
    close_fd(error_fd_);
    return got == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
  }

  // Abandons the launch: the child sees EOF instead of the go byte and exits
  // without running the command; it is reaped into the profile.
  void abandon(RawProfile& profile) {
    close_fd(go_fd_);
    close_fd(error_fd_);
    reap(pid_, /*block=*/true, profile);
  }

 private:
  StoppedChild(pid_t pid, int go_fd, int error_fd)
      : pid_(pid), go_fd_(go_fd), error_fd_(error_fd) {}

  pid_t pid_;
  int go_fd_;
  int error_fd_;
};

using Rings = std::vector<std::unique_ptr<PerfRing>>;

// Opens one event per CPU on the child and maps its ring: inherit events
// must be per-CPU to be mmap'd (the kernel refuses mmap of an inherit event
// opened with cpu=-1). Records the notes and counters of what was opened in
// the profile. On error, *why says which kind.
Result<Rings> open_events(pid_t pid, const std::vector<int>& cpus, const SamplerOptions& options,
                          RawProfile& profile, SampleErrorKind* why) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  Rings rings;
  bool build_id = options.mmap_build_id;
  *why = SampleErrorKind::kSystem;
  for (int cpu : cpus) {
    SamplerOptions o = options;
    o.mmap_build_id = build_id;
    perf_event_attr attr = make_attr(o, page * options.ring_data_pages);
    long fd = perf_event_open(&attr, pid, cpu);
    if (fd < 0 && errno == EINVAL && build_id) {
      // attr.build_id arrived in Linux 5.12; older kernels refuse the bit.
      build_id = false;
      attr.build_id = 0;
      fd = perf_event_open(&attr, pid, cpu);
      if (fd >= 0) profile.notes.push_back("kernel does not report build ids in MMAP2 records");
    }
    if (fd < 0) {
      const int err = errno;
      if (err == ENODEV || err == ENXIO) continue;  // CPU went offline since we listed it
      if (is_unavailable_errno(err)) {
        *why = SampleErrorKind::kPerfUnavailable;
        return make_error(open_error_message(err));
      }
      return make_error("perf_event_open(cpu-clock, cpu " + std::to_string(cpu) +
                        "): " + errno_text(err));
    }
    auto ring = std::make_unique<PerfRing>();
    ring->set_fd(static_cast<int>(fd));
    uint32_t pages = options.ring_data_pages;
    if (int err = ring->map(pages); err != 0) {
      return make_error(
          "mmap of the perf ring buffer (cpu " + std::to_string(cpu) + ", " +
          std::to_string(pages) + " pages): " + errno_text(err) +
          (err == EPERM ? "; raise RLIMIT_MEMLOCK or kernel.perf_event_mlock_kb" : ""));
    }
    if (pages < options.ring_data_pages && profile.notes.size() < 8) {
      profile.notes.push_back("perf ring buffer of cpu " + std::to_string(cpu) + " reduced to " +
                              std::to_string(pages) + " pages (mlock limit: kernel." +
                              "perf_event_mlock_kb=" +
                              trimmed(read_small_file("/proc/sys/kernel/perf_event_mlock_kb")) +
                              " KiB, RLIMIT_MEMLOCK); samples may be lost");
    }
    profile.counters.ring_data_pages = profile.counters.ring_data_pages == 0
                                           ? pages
                                           : std::min(profile.counters.ring_data_pages, pages);
    rings.push_back(std::move(ring));
  }
  if (rings.empty()) return make_error("no online CPU could be sampled");
  profile.counters.cpus_opened = static_cast<uint32_t>(rings.size());
  profile.layout = SampleLayout{make_attr(options, 0).sample_type,
                                options.mode == StackMode::kDwarf ? options.regs_mask : 0, true};
  return rings;
}

// Moves what the kernel wrote into the rings into the profile, parsed.
// Threading: used by one thread.
class RingDrainer {
 public:
  RingDrainer(Rings& rings, const SamplerOptions& options, RawProfile& profile)
      : rings_(rings), options_(options), profile_(profile), builder_(profile, options) {
    // Address space only (pages are touched as samples arrive): spares the
    // first few seconds of a dwarf-mode run the arena's regrowth copies.
    if (options.mode == StackMode::kDwarf) profile.stacks.reserve(size_t{64} << 20);
  }

  bool reads_python() const { return builder_.reads_python(); }

  void drain_all() {
    auto consume = [this](std::span<const uint8_t> bytes) {
      if (options_.on_ring_bytes) options_.on_ring_bytes(bytes);
      ParseStats st = parse_records(bytes, profile_.layout, builder_);
      profile_.counters.records += st.records;
      profile_.counters.unknown_records += st.unknown_records;
      profile_.counters.bad_records += st.bad_records;
      profile_.counters.bad_bytes += st.bad_bytes;
    };
    for (auto& ring : rings_) {
      if (!ring->drain(scratch_, consume)) profile_.counters.ring_errors++;
    }
  }

 private:
  Rings& rings_;
  const SamplerOptions& options_;
  RawProfile& profile_;
  ProfileBuilder builder_;
  std::vector<uint8_t> scratch_;
};

// Drains the rings whenever the kernel wakes us, until the child is reaped,
// then once more. Sets the profile's end time.
void drain_until_exit(pid_t pid, Rings& rings, const SamplerOptions& options, RawProfile& profile) {
  RingDrainer drainer(rings, options, profile);
  // pidfd (Linux 5.3) wakes the poll when the child exits; without it the
  // poll timeout bounds the delay.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  std::vector<pollfd> pfds;
  for (auto& ring : rings) pfds.push_back(pollfd{ring->fd(), POLLIN, 0});
  if (pidfd >= 0) pfds.push_back(pollfd{pidfd, POLLIN, 0});
  constexpr int kPollTimeoutMs = 100;
  bool reaped = false;
  while (!reaped) {
    // Python stacks are read as samples are drained: drain at least every
    // millisecond once a Python interpreter is known, whatever the wakeups.
    int n = poll(pfds.data(), pfds.size(), drainer.reads_python() ? 1 : kPollTimeoutMs);
    if (n < 0 && errno != EINTR) {
      // Unexpected; keep draining on a timer rather than spin.
      usleep(kPollTimeoutMs * 1000);
    }
    for (pollfd& p : pfds) {
      // An event whose task has exited stays POLLHUP for good (a main thread
      // that called pthread_exit while others run): stop polling it, lest
      // poll return at once forever; drain_all still reads its ring.
      if (p.fd != pidfd && (p.revents & (POLLHUP | POLLERR | POLLNVAL))) p.fd = -1;
    }
    drainer.drain_all();
    reaped = reap(pid, /*block=*/false, profile);
  }
  profile.end_ns = monotonic_ns();
  if (pidfd >= 0) close(pidfd);
  // The exited task's records are all in the rings by the time it is reaped
  // (perf_event_exit_task runs in do_exit, before the task turns zombie).
  drainer.drain_all();
}

// The events' count (cpu-clock: ns on a CPU), children's included: an
// inherited event adds its count to its parent's when its task exits.
uint64_t clock_count(const Rings& rings) {
  uint64_t total = 0;
  for (const auto& ring : rings) {
    uint64_t value = 0;
    if (read(ring->fd(), &value, sizeof value) == static_cast<ssize_t>(sizeof value)) {
      total += value;
    }
  }
  return total;
}

// Per-CPU rings interleave: order everything by time for the consumers.
void sort_by_time(RawProfile& profile) {
  std::stable_sort(profile.samples.begin(), profile.samples.end(),
                   [](const Sample& a, const Sample& b) { return a.time < b.time; });
  for (auto& [p, maps] : profile.mmaps) {
    std::stable_sort(maps.begin(), maps.end(),
                     [](const Mapping& a, const Mapping& b) { return a.time < b.time; });
  }
  std::stable_sort(profile.comms.begin(), profile.comms.end(),
                   [](const Comm& a, const Comm& b) { return a.time < b.time; });
  std::stable_sort(profile.tasks.begin(), profile.tasks.end(),
                   [](const TaskEvent& a, const TaskEvent& b) { return a.time < b.time; });
  std::stable_sort(profile.throttles.begin(), profile.throttles.end(),
                   [](const ThrottleEvent& a, const ThrottleEvent& b) { return a.time < b.time; });
}

void note_losses(RawProfile& profile) {
  if (profile.counters.lost_samples > 0) {
    profile.notes.push_back(
        std::to_string(profile.counters.lost_samples) +
        " samples lost (ring buffers full); try a larger ring (-m) or a lower rate (-F)");
  }
  if (profile.counters.throttle_events > 0) {
    profile.notes.push_back("the kernel throttled sampling " +
                            std::to_string(profile.counters.throttle_events) +
                            " times (kernel.perf_event_max_sample_rate)");
  }
}

}  // namespace

SampleAccount account_samples(const RawProfile& profile) {
  SampleAccount a;
  a.recorded = profile.samples.size();
  a.lost = profile.counters.lost_samples;
  if (profile.period_ns == 0) return a;
  a.asked = profile.counters.clock_ns / profile.period_ns;
  // Throttled intervals, per CPU: THROTTLE until the next UNTHROTTLE (or the
  // end of the run). The task may not have run all of it: capped below.
  std::map<uint32_t, uint64_t> throttled_since;
  uint64_t throttled_ns = 0;
  for (const ThrottleEvent& t : profile.throttles) {
    if (t.throttle) {
      throttled_since.emplace(t.cpu, t.time);
    } else if (auto it = throttled_since.find(t.cpu); it != throttled_since.end()) {
      if (t.time > it->second) throttled_ns += t.time - it->second;
      throttled_since.erase(it);
    }
  }
  for (const auto& [cpu, since] : throttled_since) {
    if (static_cast<uint64_t>(profile.end_ns) > since) throttled_ns += profile.end_ns - since;
  }
  const uint64_t accounted = a.recorded + a.lost;
  const uint64_t rest = a.asked > accounted ? a.asked - accounted : 0;
  a.throttled = std::min(rest, throttled_ns / profile.period_ns);
  a.skipped = rest - a.throttled;
  if (profile.counters.clock_ns > 0) {
    a.effective_hz =
        static_cast<double>(a.recorded) * 1e9 / static_cast<double>(profile.counters.clock_ns);
  }
  return a;
}

double sampling_slowdown(const RawProfile& profile, const SampleAccount& account) {
  const double cpu_ns = static_cast<double>(profile.user_ns + profile.sys_ns);
  if (account.asked == 0 || cpu_ns <= 0 || account.skipped == 0) return 0;
  const double skipped_share =
      static_cast<double>(account.skipped) / static_cast<double>(account.asked);
  const double sys_share = static_cast<double>(profile.sys_ns) / cpu_ns;
  const double share = std::min(skipped_share, sys_share);
  return share >= 1 ? 0 : share / (1 - share);  // time lost / time left to the program
}

ProcessCount count_processes(const RawProfile& profile) {
  std::set<uint32_t> processes;
  if (profile.child_pid > 0) processes.insert(static_cast<uint32_t>(profile.child_pid));
  for (const TaskEvent& t : profile.tasks) {
    if (t.fork && t.pid != t.ppid) processes.insert(t.pid);  // not a new thread
  }
  std::set<uint32_t> sampled;
  for (const Sample& s : profile.samples) sampled.insert(s.pid);
  ProcessCount c;
  c.processes = processes.size();
  for (uint32_t pid : processes) c.unsampled += sampled.count(pid) ? 0 : 1;
  return c;
}

// The steps: start the child stopped before exec, open the events on it,
// let it exec (the events enable themselves at exec), drain the rings until
// it is reaped, then order what was collected by time.
Result<RawProfile> sample_command(const std::vector<std::string>& argv,
                                  const SamplerOptions& options, SampleErrorKind* kind) {
  if (kind) *kind = SampleErrorKind::kNone;
  if (argv.empty()) return fail(kind, SampleErrorKind::kSystem, "empty command");
  if (Status v = validate(options); !v) {
    return fail(kind, SampleErrorKind::kSystem, v.error().message);
  }
  std::vector<int> cpus = online_cpus();
  RawProfile profile = new_profile(options);
  profile.perf_maps_before = existing_perf_maps();

  SignalForwarder forwarder(options.forward_signals);
  auto child = StoppedChild::start(argv);
  if (!child) return fail(kind, SampleErrorKind::kSystem, child.error().message);
  const pid_t pid = child->pid();
  profile.child_pid = pid;
  forwarder.set_child(pid);

  SampleErrorKind why = SampleErrorKind::kSystem;
  auto rings = open_events(pid, cpus, options, profile, &why);
  if (!rings) {
    child->abandon(profile);
    return fail(kind, why, rings.error().message);
  }

  profile.start_ns = monotonic_ns();
  if (int exec_errno = child->let_exec(); exec_errno != 0) {
    rings->clear();
    child->abandon(profile);
    return fail(kind, SampleErrorKind::kCannotStart,
                "cannot start '" + argv[0] + "': " + std::strerror(exec_errno));
  }
  if (options.on_child) options.on_child(pid);
  if (auto uid = process_fs_uid(pid)) profile.uids.emplace(pid, *uid);

  drain_until_exit(pid, *rings, options, profile);
  profile.counters.clock_ns = clock_count(*rings);
  rings->clear();
  forwarder.set_child(0);
  if (options.on_child) options.on_child(-1);

  sort_by_time(profile);
  note_losses(profile);
  note_foreign_perf_maps(profile);
  return profile;
}

}  // namespace strata::sampler
