// CPU sampling of a child process from outside, with perf_event_open: the
// capture half of `strata cpu` (shared/reference/cpu-sampling.md). It runs
// the command, samples its user-mode CPU time on cpu-clock, and returns the
// raw samples (registers and user stack copies, or frame-pointer callchains)
// with the mmap/comm/fork/exit records an unwinder needs. Unwinding and
// symbolization happen later, elsewhere.
//
// Threading: sample_command blocks the calling thread until the child exits.
// It forks, so call it from a single-threaded process (or accept that only
// the calling thread exists in the child until exec). While it runs it
// forwards the signals common/signal_forwarder.h lists (nested in the
// caller's forwarder if it holds one), so at most one call may be in
// progress per process.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "sampler/perf_records.h"
#include "sampler/python_stack.h"

namespace strata::sampler {

enum class StackMode {
  kDwarf,         // user registers + a copy of the user stack, unwound offline (DWARF CFI)
  kFramePointer,  // the kernel walks frame pointers (PERF_SAMPLE_CALLCHAIN, user part only)
};

const char* stack_mode_name(StackMode mode);  // "dwarf" / "fp"

// x86-64 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h).
enum PerfRegX86 : int {
  kRegAx = 0,
  kRegBx = 1,
  kRegCx = 2,
  kRegDx = 3,
  kRegSi = 4,
  kRegDi = 5,
  kRegBp = 6,
  kRegSp = 7,
  kRegIp = 8,
  kRegFlags = 9,
  kRegR8 = 16,
  kRegR12 = 20,
  kRegR13 = 21,
  kRegR14 = 22,
  kRegR15 = 23,
};

// What a DWARF unwinder needs for x86-64: ip, sp and the callee-saved
// registers (rbx, rbp, r12-r15) whose values CFI rules may restore.
inline constexpr uint64_t kDwarfRegsMask =
    (1ull << kRegBx) | (1ull << kRegBp) | (1ull << kRegSp) | (1ull << kRegIp) | (1ull << kRegR12) |
    (1ull << kRegR13) | (1ull << kRegR14) | (1ull << kRegR15);

struct Mapping;

// What a mapped file says about CPython, from its symbols (symbolize/
// python_runtime.h finds it; the sampler links no ELF reader): where
// _PyRuntime lies in the process and the version; or, for an interpreter
// whose frames cannot be read, why (`problem`, a phrase for a note).
struct PythonRuntime {
  uint64_t address = 0;
  int major = 0;
  int minor = 0;
  std::string problem;
};

struct SamplerOptions {
  StackMode mode = StackMode::kDwarf;
  // Samples per second of CPU time of each thread. cpu-clock is an hrtimer
  // event, so the period is opened as 1e9 / frequency_hz ns. The CLI's
  // default is 4 kHz (cli/cpu_sampling.h); this one is the library's.
  uint32_t frequency_hz = 1000;
  // Bytes of user stack copied per sample (dwarf mode). Multiple of 8, at most
  // 65528 (the record size is a u16). 16 KiB covers ~100 typical C++ frames
  // at half the ring traffic of perf's 32 KiB-class settings.
  uint32_t stack_bytes = 16384;
  uint64_t regs_mask = kDwarfRegsMask;  // dwarf mode, x86-64 perf register bits
  // Data pages per CPU ring buffer (a power of two; one metadata page is
  // added). 128 pages = 512 KiB, which with the metadata page fits the
  // default perf_event_mlock_kb (516) for unprivileged users. Halved down to
  // kMinRingPages on EPERM from mmap (mlock limits), with a note.
  uint32_t ring_data_pages = 128;
  // Ask for build ids in MMAP2 records (Linux 5.12+); opened without them
  // where the kernel refuses the flag.
  bool mmap_build_id = true;
  // Forward the signals sent to strata to the child (see sample_command).
  bool forward_signals = true;
  // Called with the child's pid once it has exec'd, and with -1 once reaped.
  std::function<void(int pid)> on_child;
  // Reads each sample's Python stack from the target's memory (CPython
  // 3.8-3.13, sampler/python_stack.h) where this finds a Python runtime in a
  // process's mappings: called once per new file mapped executable; nullopt
  // for files that are no Python interpreter. Empty: no Python stacks read.
  std::function<std::optional<PythonRuntime>(const Mapping&)> find_python_runtime;
  // The same for a live process, from its /proc/PID/maps: a full ring drops
  // records of every kind, the MMAP that shows an interpreter too, so after
  // a loss a process that samples show but no reader covers is looked up
  // here (sampler/profile_builder.h says how often).
  std::function<std::optional<PythonRuntime>(uint32_t pid)> find_python_runtime_of_process;
  // Wake the reader at every sample instead of at half a ring, so that a
  // Python stack is read within microseconds of its sample rather than
  // milliseconds (the CLI sets it for a command that runs a Python
  // interpreter). Costs strata one wakeup per sample.
  bool wake_per_sample = false;
  // Called with each chunk of raw ring bytes (whole records) before parsing:
  // for recording parser test inputs and for debugging a kernel's output.
  std::function<void(std::span<const uint8_t> bytes)> on_ring_bytes;
};

inline constexpr uint32_t kMinRingPages = 8;

// One sample, compact: variable parts live in RawProfile's arenas.
struct Sample {
  uint64_t ip = 0;
  uint64_t time = 0;    // CLOCK_MONOTONIC ns
  uint64_t period = 0;  // ns of CPU time this sample stands for
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint32_t regs_abi = 0;      // PERF_SAMPLE_REGS_ABI_*; 0: no registers (regs() is empty)
  uint64_t regs_index = 0;    // into RawProfile::regs, in units of regs_per_sample
  uint64_t stack_offset = 0;  // into RawProfile::stacks
  uint32_t stack_size = 0;    // dyn_size: valid bytes copied from sp upwards
  uint32_t callchain_size = 0;
  uint64_t callchain_offset = 0;  // into RawProfile::callchains
  // The Python stack read from the target's memory for this sample, leaf
  // first, in RawProfile::python_frames; python_read says whether one was.
  uint64_t python_offset = 0;
  uint32_t python_size = 0;
  bool python_read = false;
};

struct Mapping : MmapFields {
  uint64_t time = 0;
  std::array<uint8_t, 20> build_id{};
  std::string filename;
};

struct Comm {
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool exec = false;
  std::string name;
};

struct TaskEvent {
  bool fork = false;  // else exit
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t tid = 0;
  uint32_t ptid = 0;
};

struct ThrottleEvent {
  bool throttle = false;  // else unthrottle
  uint64_t time = 0;
  uint32_t cpu = 0;
};

// Survivable trouble, counted (shared/DESIGN.md, Conventions).
struct SamplerCounters {
  uint64_t records = 0;
  uint64_t lost_events = 0;   // PERF_RECORD_LOST records
  uint64_t lost_samples = 0;  // samples they (and LOST_SAMPLES) say were dropped
  uint64_t throttle_events = 0;
  uint64_t unthrottle_events = 0;
  uint64_t bad_records = 0;
  uint64_t bad_bytes = 0;
  uint64_t unknown_records = 0;
  uint64_t ring_errors = 0;      // ring positions that made no sense (drain skipped)
  uint32_t cpus_opened = 0;      // per-CPU event fds
  uint32_t ring_data_pages = 0;  // smallest per-CPU ring actually mapped
  // Python stacks read from memory (sampler/python_stack.h): reads that
  // found the sampled thread's stack, found no Python thread, or failed
  // (memory changed under the reader, or reading was refused); the time
  // they took in strata, and how long after its sample each read ran.
  uint64_t python_reads = 0;
  uint64_t python_no_thread = 0;
  uint64_t python_read_failures = 0;
  uint64_t python_read_ns = 0;
  uint64_t python_read_delay_ns = 0;
  // cpu-clock's own count, summed over the events once the target is reaped:
  // ns the sampled tasks spent on a CPU while sampled (interrupts included).
  uint64_t clock_ns = 0;
};

// Everything captured from one run. Samples are sorted by time; mappings per
// pid are in time order. A child forked by the target starts with its parent's
// mappings (no MMAP records are sent for them): consult `tasks` for FORK.
struct RawProfile {
  StackMode mode = StackMode::kDwarf;
  uint32_t frequency_hz = 0;
  uint64_t period_ns = 0;
  uint32_t stack_bytes = 0;  // requested copy size (dwarf)
  uint64_t regs_mask = 0;    // (dwarf) bits of the registers in each sample
  uint32_t regs_per_sample = 0;
  SampleLayout layout;   // what the events were opened with (to re-parse raw bytes)
  int64_t start_ns = 0;  // CLOCK_MONOTONIC: events enabled (exec)
  int64_t end_ns = 0;    // child reaped
  int child_pid = -1;
  std::optional<int> exit_status;
  std::optional<int> signal;  // set when the child was killed by a signal
  int64_t user_ns = 0;        // child's CPU time from wait4 (for sanity checks)
  int64_t sys_ns = 0;
  std::optional<int64_t> minor_faults;  // wait4's ru_minflt; nullopt until the child is reaped

  std::vector<Sample> samples;
  std::vector<uint64_t> regs;
  std::vector<uint8_t> stacks;
  std::vector<uint64_t> callchains;
  std::map<uint32_t, std::vector<Mapping>> mmaps;  // by pid
  std::vector<Comm> comms;
  std::vector<TaskEvent> tasks;
  std::vector<ThrottleEvent> throttles;
  // The uid each sampled process created files as (its fs uid, read from
  // /proc/PID/status while it lived): its /tmp/perf-PID.map is read only when
  // owned by that uid. Processes never seen alive are missing.
  std::map<uint32_t, uint32_t> uids;
  // Pids whose /tmp/perf-PID.map existed before the run began: a stale file
  // or another user's, never the target's; not read, not removed.
  std::set<uint32_t> perf_maps_before;
  SamplerCounters counters;
  std::vector<std::string> notes;  // one-line warnings for the CLI to print

  // Python stacks read from memory: frames of every sample (Sample::
  // python_offset), code objects they name (PythonFrameRead::code indexes
  // python_codes, shared by all processes), and per process the interpreter
  // version read and, where reading could not work, why.
  std::vector<PythonFrameRead> python_frames;
  std::vector<PythonCode> python_codes;
  struct PythonProcess {
    int major = 0;
    int minor = 0;
    std::string problem;  // "" when its stacks were read
  };
  std::map<uint32_t, PythonProcess> python_processes;

  std::span<const uint64_t> regs_of(const Sample& s) const;
  std::span<const uint8_t> stack_of(const Sample& s) const;
  // fp mode: user return addresses, innermost first; [0] is the sample ip.
  std::span<const uint64_t> callchain_of(const Sample& s) const;
  std::span<const PythonFrameRead> python_stack_of(const Sample& s) const;
  // A register by perf number, if the sample carries it.
  std::optional<uint64_t> reg(const Sample& s, int perf_reg) const;

  int shell_status() const { return signal ? 128 + *signal : exit_status.value_or(0); }
};

// Where the samples the kernel was asked for went (perf mode): one per
// period of the sampled tasks' on-CPU time, which cpu-clock counts itself.
// Each is recorded, lost (the ring was full: LOST / LOST_SAMPLES records),
// throttled (its period fell between a THROTTLE and the next UNTHROTTLE on
// that CPU) or skipped: the kernel takes no sample for a period that ends in
// kernel mode (the events exclude the kernel) and drops the periods that pass
// while it is still taking the previous sample (hrtimer_forward_now's
// overruns in perf_swevent_hrtimer), counted nowhere by the kernel.
struct SampleAccount {
  uint64_t asked = 0;  // clock_ns / period_ns
  uint64_t recorded = 0;
  uint64_t lost = 0;
  uint64_t throttled = 0;
  uint64_t skipped = 0;     // asked minus the others (0 if they exceed it: timer slack)
  double effective_hz = 0;  // recorded samples per second of on-CPU time
};
SampleAccount account_samples(const RawProfile& profile);

// The target's slowdown from sampling, as a fraction (0.25: 25 % slower).
// The kernel charges the time it spends taking samples to the sampled task
// as system time, and passes over the periods that end while it does
// (skipped): where the skipped periods and the system time agree, both are
// the sampler's cost. The estimate is the smaller of the two shares of the
// on-CPU time, so a program that spends its own time in system calls (whose
// periods are skipped too) is not blamed on the sampler beyond its skipped
// periods. 0 where nothing was skipped.
double sampling_slowdown(const RawProfile& profile, const SampleAccount& account);

// Processes of the run (the command and those it forked) and how many got
// no sample: they ran less than one period of user CPU time.
struct ProcessCount {
  size_t processes = 0;
  size_t unsampled = 0;
};
ProcessCount count_processes(const RawProfile& profile);

enum class SampleErrorKind {
  kNone,
  kCannotStart,      // exec failed: "cannot start 'CMD': REASON" (the CLI exits 127)
  kPerfUnavailable,  // perf_event_open refused (EACCES/EPERM/ENOSYS/ENOENT/EOPNOTSUPP):
                     // the caller may fall back to in-process sampling
  kSystem,           // anything else (bad options, fork, mmap)
};

// Runs argv under the sampler until the child exits. The child stays in
// strata's process group with strata's stdio, and dies with strata
// (PR_SET_PDEATHSIG). Signals sent to strata itself (kill, not the terminal,
// which already signals the whole group) are forwarded to the child
// (common/signal_forwarder.h); the profile of what ran is returned whatever the
// child's fate. On error, *kind (if given) says which kind.
Result<RawProfile> sample_command(const std::vector<std::string>& argv,
                                  const SamplerOptions& options, SampleErrorKind* kind = nullptr);

// "0-3,8,10-11" (sysfs cpu lists) -> {0,1,2,3,8,10,11}; empty on bad text.
std::vector<int> parse_cpu_list(std::string_view text);

}  // namespace strata::sampler
