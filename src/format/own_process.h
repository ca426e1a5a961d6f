// What a producer (the CUDA agent, strata::instrument, the in-process
// sampler) tells its spool about its own process: the process-info chunk
// (pid, ppid, /proc/self/exe, /proc/self/cmdline) and memory-map chunks
// (/proc/self/maps), written the same way by all three.
//
// Async-signal-safety: everything here uses only open, read, readlink,
// mmap, mremap, munmap, close and clock_gettime, and the stack: no malloc,
// no locks. So it may run after fork in a multithreaded process, in an exit
// handler or in a fatal-signal handler, and it never allocates inside the
// profiled program's heap. Errors: nothing throws; a file that cannot be
// read gives an empty field (process-info) or no chunk (memory-map).
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/spool_writer.h"

namespace strata::format {

// A whole file read into anonymous mapped memory: /proc files have no size
// to allocate for in advance. Release with release_proc_file.
struct ProcFile {
  char* data = nullptr;
  size_t size = 0;
  size_t capacity = 0;  // bytes mapped
};

// Reads `path` whole (growing the mapping as needed). False when the file
// cannot be opened or no memory mapped; then *out is empty.
bool read_proc_file(const char* path, ProcFile* out);
void release_proc_file(ProcFile* file);

// Appends a process-info chunk for the calling process. A command line
// longer than `max_cmdline` bytes is cut after the last whole argument that
// fits. Returns whether it was written.
bool append_own_process_info(SpoolWriter& writer, size_t max_cmdline = SIZE_MAX);

// Appends a memory-map chunk: the time (CLOCK_MONOTONIC) and the text of
// /proc/self/maps. Returns whether it was written.
bool append_own_memory_map(SpoolWriter& writer);

}  // namespace strata::format
