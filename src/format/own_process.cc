#include "format/own_process.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string_view>

#include "common/clock.h"
#include "format/byte_order.h"

namespace strata::format {

bool read_proc_file(const char* path, ProcFile* out) {
  *out = ProcFile{};
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t cap = 64 << 10;
  void* mem = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    ::close(fd);
    return false;
  }
  char* buf = static_cast<char*>(mem);
  size_t len = 0;
  for (;;) {
    if (len == cap) {
      void* grown = mremap(buf, cap, cap * 2, MREMAP_MAYMOVE);
      if (grown == MAP_FAILED) break;  // keep what fits
      buf = static_cast<char*>(grown);
      cap *= 2;
    }
    ssize_t n = ::read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  ::close(fd);
  *out = ProcFile{buf, len, cap};
  return true;
}

void release_proc_file(ProcFile* file) {
  if (file->data != nullptr) munmap(file->data, file->capacity);
  *file = ProcFile{};
}

bool append_own_process_info(SpoolWriter& writer, size_t max_cmdline) {
  char exe[4096];
  ssize_t exe_len = ::readlink("/proc/self/exe", exe, sizeof exe);
  if (exe_len < 0) exe_len = 0;
  ProcFile cmdline;
  read_proc_file("/proc/self/cmdline", &cmdline);
  size_t cmdline_size = cmdline.size;
  if (cmdline_size > max_cmdline) {
    cmdline_size = max_cmdline;
    while (cmdline_size > 0 && cmdline.data[cmdline_size - 1] != '\0') --cmdline_size;
  }
  bool written = writer.append_process_info(
      static_cast<uint32_t>(getpid()), static_cast<uint32_t>(getppid()),
      std::string_view(exe, static_cast<size_t>(exe_len)),
      cmdline.data ? std::string_view(cmdline.data, cmdline_size) : std::string_view());
  release_proc_file(&cmdline);
  return written;
}

bool append_own_memory_map(SpoolWriter& writer) {
  ProcFile maps;
  if (!read_proc_file("/proc/self/maps", &maps)) return false;
  unsigned char prefix[kMemoryMapPrefix];
  store_le64(prefix, static_cast<uint64_t>(monotonic_ns()));
  iovec parts[2] = {{prefix, sizeof prefix}, {maps.data, maps.size}};
  bool written = writer.append_iov(ChunkKind::kMemoryMap, parts, 2);
  release_proc_file(&maps);
  return written;
}

}  // namespace strata::format
