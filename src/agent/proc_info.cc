#include "agent/proc_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace strata::agent {

namespace {

// Reads up to size bytes of a small /proc file; -1 on error.
ssize_t read_small_file(const char* path, char* out, size_t size) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t total = 0;
  while (total < size) {
    ssize_t n = ::read(fd, out + total, size - total);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  ::close(fd);
  return static_cast<ssize_t>(total);
}

}  // namespace

uint64_t fnv1a64(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

ThreadNamer::Entry* ThreadNamer::find_or_insert(uint32_t tid) {
  size_t slot = (tid * 2654435761u) % kMaxThreads;
  for (size_t probe = 0; probe < kMaxThreads; ++probe) {
    Entry& entry = table_[(slot + probe) % kMaxThreads];
    if (entry.tid == tid) return &entry;
    if (entry.tid == 0) {
      entry.tid = tid;
      entry.name_hash = 0;
      return &entry;
    }
  }
  return nullptr;
}

int ThreadNamer::scan(format::SpoolWriter& spool) {
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  int written = 0;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    unsigned long tid = std::strtoul(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || tid == 0) continue;
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/self/task/%lu/comm", tid);
    char name[64];
    ssize_t len = read_small_file(path, name, sizeof(name));
    if (len <= 0) continue;  // the thread exited meanwhile
    if (name[len - 1] == '\n') --len;
    uint64_t hash = fnv1a64(name, static_cast<size_t>(len)) | 1;
    Entry* known = find_or_insert(static_cast<uint32_t>(tid));
    if (known != nullptr && known->name_hash == hash) continue;
    if (spool.append_thread_name(static_cast<uint32_t>(tid),
                                 std::string_view(name, static_cast<size_t>(len)))) {
      ++written;
      if (known != nullptr) known->name_hash = hash;
    }
  }
  ::closedir(dir);
  return written;
}

}  // namespace strata::agent
