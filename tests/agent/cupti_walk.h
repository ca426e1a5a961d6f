// An offline reader of the agent's spools into plain structs, for tests that
// check what the agent recorded (tests/agent) without a trace database: walks
// each cupti-buffer chunk with the import module's record walker
// (import/cupti_records.h), through the one chunk loop
// (import/chunk_visitor.h), and resolves string ids through the strings
// chunks (docs/agent.md, Spool contents). Test-only: import/cupti_ingest.h is
// the production path.
//
// Threading: none (plain functions). Allocation: vectors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata::agent_test {

struct ApiCall {
  bool runtime = false;  // CUPTI_ACTIVITY_KIND_RUNTIME (else DRIVER)
  uint32_t cbid = 0;
  uint64_t start = 0, end = 0;
  uint32_t pid = 0, tid = 0, correlation = 0;
};

struct Kernel {
  std::string name;
  uint64_t start = 0, end = 0;
  uint32_t device = 0, stream = 0, correlation = 0, graph_id = 0;
  int32_t grid[3] = {}, block[3] = {};
};

struct Memcpy {
  uint8_t copy_kind = 0, src_kind = 0, dst_kind = 0;
  bool peer = false;  // MEMCPY2
  uint64_t bytes = 0, start = 0, end = 0;
  uint32_t correlation = 0, stream = 0;
};

struct Memset {
  uint64_t bytes = 0, start = 0, end = 0;
  uint32_t value = 0, correlation = 0;
};

struct Sync {
  uint32_t type = 0;
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
};

struct Marker {
  uint32_t flags = 0;  // CUpti_ActivityFlag: START, END, INSTANTANEOUS
  uint64_t timestamp = 0;
  uint32_t id = 0;
  std::string name, domain;
};

struct Device {
  uint32_t id = 0;
  std::string name;
  uint32_t sm_count = 0, cc_major = 0, cc_minor = 0, core_clock_khz = 0;
  uint64_t global_memory = 0;
};

struct Spool {
  std::string path;
  uint32_t pid = 0;
  int64_t start_clock_ns = 0;
  std::vector<ApiCall> apis;
  std::vector<Kernel> kernels;
  std::vector<Memcpy> memcpys;
  std::vector<Memset> memsets;
  std::vector<Sync> syncs;
  std::vector<Marker> markers;
  std::vector<Device> devices;
  std::map<uint64_t, std::string> strings;
  std::map<uint32_t, std::string> thread_names;
  std::map<uint32_t, uint64_t> drop_counters;
  std::vector<std::string> args;  // from process-info
  uint32_t ppid = 0;
  uint64_t buffers = 0;
  uint64_t unknown_records = 0;  // records of kinds the walker does not know (walk stops)
  uint64_t unresolved_strings = 0;
  bool end_seen = false, clean_end = false;
  uint32_t end_signal = 0;
};

// Reads a whole spool. Errors: nullopt with `error` set.
std::optional<Spool> read_spool(const std::string& path, std::string* error);

// Every spool-*.bin in `dir`, sorted.
std::vector<std::string> spool_files(const std::string& dir);

}  // namespace strata::agent_test

// The name tests/agent knows this reader by.
namespace agent_test = strata::agent_test;
