// The agent's settings, read from the environment once at init.
//
//   STRATA_RUN_DIR             directory for spool-PID.bin (set by the CLI; required)
//   STRATA_AGENT_BUFFER_MB     size of one CUPTI activity buffer, MiB (default 8, 1..64)
//   STRATA_AGENT_BUFFER_COUNT  buffers in the pool: the memory cap (default 16, 2..1024)
//   STRATA_AGENT_FLUSH_MS      period of the drain thread's CUPTI flush (default 500, 10..500)
//   STRATA_AGENT_ALL_APIS      1: also record the noisy getter APIs (cudaGetDevice, ...)
//
// Allocation: none; the struct holds fixed arrays. parse_config is pure
// apart from the lookup function it is given, so tests feed it a fake
// environment.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::agent {

struct Config {
  static constexpr size_t kMaxPath = 4096;
  static constexpr size_t kMaxWarning = 256;

  bool has_run_dir = false;
  char run_dir[kMaxPath] = {};
  uint32_t buffer_mb = 8;
  uint32_t buffer_count = 16;
  uint32_t flush_ms = 500;
  bool all_apis = false;
  // A value that was out of range or not a number: one line for stderr (the
  // default was kept). Empty when everything parsed.
  char warning[kMaxWarning] = {};
};

using EnvLookup = const char* (*)(const char* name);

Config parse_config(EnvLookup lookup);

// "RUN_DIR/spool-PID.bin" into `out`; false when it does not fit.
bool spool_path(const Config& config, int pid, char* out, size_t out_size);

}  // namespace strata::agent
