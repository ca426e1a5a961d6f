// What the agent tells the spool about its threads: thread-name chunks. (The
// process-info chunk is format/own_process.h's, shared by every producer.)
//
// Allocation: ThreadNamer keeps a fixed table and scans
// /proc/self/task with opendir (which allocates), so it runs on the drain
// thread or at exit, never in a CUPTI callback or a signal handler.
// Threading: one caller at a time per ThreadNamer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/spool_writer.h"

namespace strata::agent {

// 64 KiB of argv is plenty for a profile's metadata; the agent's process-info
// chunk cuts longer command lines at the last whole argument that fits.
inline constexpr size_t kMaxCmdline = 64 * 1024;

// Names threads once each, and again when a thread renames itself
// (pthread_setname_np after it first ran). Threads that start and exit
// between two scans are never named: their records keep the bare tid.
class ThreadNamer {
 public:
  static constexpr size_t kMaxThreads = 4096;

  // Reads /proc/self/task/*/comm and appends a thread-name chunk for every
  // thread that is new or renamed. Returns the number of chunks written.
  int scan(format::SpoolWriter& spool);

 private:
  struct Entry {
    uint32_t tid;
    uint64_t name_hash;
  };
  // Open addressing on tid; tid 0 marks a free slot. When full, threads
  // beyond the table are named on every scan (correct, just repetitive).
  Entry* find_or_insert(uint32_t tid);

  Entry table_[kMaxThreads] = {};
};

uint64_t fnv1a64(const void* data, size_t size);

}  // namespace strata::agent
