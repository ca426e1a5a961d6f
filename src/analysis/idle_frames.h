// Idle-spinning library threads (issue 20 item 7): samples where a thread
// pool or runtime burns CPU while it waits for work (OpenBLAS's
// blas_thread_server yielding in a loop, OpenMP workers spinning at a
// barrier, a pool waiting on a condition variable). A cpu-clock profile
// counts that time, and in a PyTorch or NumPy program it can outweigh the
// program's own hot function; py-spy leaves idle samples out unless --idle
// asks for them, and strata's reports do the same (docs/cli.md, --idle).
//
// A sample is idle when its leaf (the sampled pc's frames: the inlined
// chain and the function that contains them) matches a row of kIdleRules:
// only what the thread runs at that instant decides, so a pool thread doing
// a GEMM is working and the same thread spinning afterwards is idle. The
// table is short on purpose; each row names what it recognizes:
// - function rows: the name (without parameters, leading underscores or
//   glibc's __GI_ prefix) equal to the pattern;
// - module rows: any frame of a runtime whose own code is only scheduling
//   and waiting (libgomp, LLVM/Intel libomp, TBB). Their stripped builds
//   name no function, so the library is what can be recognized; the work
//   they hand out runs in the caller's code, not theirs;
// - thread-entry rows: the own code of a thread's entry function in a
//   library whose kernels do work in the same file (stripped OpenBLAS).
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cpu_profile.h"

namespace strata::analysis {

enum class IdleMatch : uint8_t {
  kFunction,      // the function's name
  kModulePrefix,  // the start of the module's file name ("libgomp" for libgomp-a34b3233.so.1)
  // A thread's entry function (called by start_thread) in the module named
  // by the prefix: its own code, not what it calls. For a library that
  // keeps its pool loop static (Debian's OpenBLAS: blas_thread_server is not
  // in .dynsym) while its kernels, in the same file, do the work.
  kThreadEntryIn,
};

struct IdleRule {
  IdleMatch match;
  std::string_view pattern;
  std::string_view what;  // the reports' words for it
};

// Documented in docs/cli.md (--idle); keep the two in step.
inline constexpr IdleRule kIdleRules[] = {
    // Thread pools' own spin loops.
    {IdleMatch::kFunction, "blas_thread_server", "OpenBLAS thread server waiting for work"},
    {IdleMatch::kThreadEntryIn, "libopenblas", "OpenBLAS thread server waiting for work"},
    {IdleMatch::kModulePrefix, "libgomp", "OpenMP runtime (libgomp) spinning or waiting"},
    {IdleMatch::kModulePrefix, "libomp", "OpenMP runtime (libomp) spinning or waiting"},
    {IdleMatch::kModulePrefix, "libiomp", "OpenMP runtime (Intel libiomp, MKL) spinning or waiting"},
    {IdleMatch::kModulePrefix, "libtbb", "TBB scheduler spinning or waiting"},
    // Yielding: a spin loop's way of waiting.
    {IdleMatch::kFunction, "sched_yield", "sched_yield loop"},
    // Blocking waits: sampled only at the instant a thread goes to sleep or
    // wakes (cpu-clock counts on-CPU time), but named so that they never pass
    // for work.
    {IdleMatch::kFunction, "pthread_cond_wait", "condition variable wait"},
    {IdleMatch::kFunction, "pthread_cond_timedwait", "condition variable wait"},
    {IdleMatch::kFunction, "pthread_cond_timedwait64", "condition variable wait"},
    {IdleMatch::kFunction, "pthread_cond_clockwait", "condition variable wait"},
    {IdleMatch::kFunction, "futex_abstimed_wait_common", "futex wait"},
    {IdleMatch::kFunction, "futex_abstimed_wait_common64", "futex wait"},
    {IdleMatch::kFunction, "futex_wait", "futex wait"},
    {IdleMatch::kFunction, "sem_wait", "semaphore wait"},
    {IdleMatch::kFunction, "sem_timedwait", "semaphore wait"},
    {IdleMatch::kFunction, "pthread_barrier_wait", "barrier wait"},
    {IdleMatch::kFunction, "nanosleep", "sleep"},
    {IdleMatch::kFunction, "clock_nanosleep", "sleep"},
    {IdleMatch::kFunction, "epoll_wait", "poll/select wait"},
    {IdleMatch::kFunction, "poll", "poll/select wait"},
    {IdleMatch::kFunction, "ppoll", "poll/select wait"},
    {IdleMatch::kFunction, "select", "poll/select wait"},
    {IdleMatch::kFunction, "pselect", "poll/select wait"},
};

// The row the sample's leaf matches; nullptr when the sample is working.
const IdleRule* idle_rule_of(const Profile& profile, const Sample& sample);

struct IdleShare {
  std::string what;  // IdleRule::what
  uint64_t samples = 0;
  double time_s = 0;
};

struct IdleThread {
  int32_t tid = 0;
  uint64_t samples = 0;
  double time_s = 0;
  std::string what;  // the reason with most time on this thread
};

struct IdleSummary {
  uint64_t samples = 0;
  double time_s = 0;
  double share = 0;                // of all samples' time, 0..1
  std::vector<IdleShare> by_what;  // time descending, then name
  std::vector<IdleThread> threads;  // by tid
};

// Sampled profiles only; an instrumented one has no idle samples.
IdleSummary idle_summary(const Profile& profile);

// The profile without its idle samples (frames and threads kept).
Profile without_idle(const Profile& profile);

}  // namespace strata::analysis
