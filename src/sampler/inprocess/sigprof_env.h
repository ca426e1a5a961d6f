// How the CLI (inprocess_sampler.cc) tells libstrata_sigprof.so
// (sigprof_preload.cc) what to do: the environment of the target. The
// spools the library writes (one per process image, sigprof-PID.bin or
// sigprof-PID.N.bin after an exec kept the pid) use the chunk kinds of
// src/format (format/sampler_payloads.h, docs/sampler-fallback.md).
//
// Threading: constants only.
#pragma once

#include <cstdint>

namespace strata::sampler::sigprof {

inline constexpr const char* kEnvDir = "STRATA_SIGPROF_DIR";
inline constexpr const char* kEnvHz = "STRATA_SIGPROF_HZ";
inline constexpr const char* kEnvStackBytes = "STRATA_SIGPROF_STACK";

inline constexpr uint32_t kDefaultHz = 1000;
inline constexpr uint32_t kDefaultStackBytes = 16384;

}  // namespace strata::sampler::sigprof
