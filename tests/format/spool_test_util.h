// Helpers for the spool tests: a temporary directory, whole-file byte I/O,
// a small spool with one chunk of every kind, draining a reader, and an
// allocation counter.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "format/spool_reader.h"
#include "format/spool_writer.h"
#include "util/temp_dir.h"

namespace strata::format::testing {

using strata::test_util::TempDir;

std::vector<std::byte> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<std::byte>& bytes);

// A chunk as the tests expect to read it back.
struct ReadChunk {
  ChunkKind kind;
  std::vector<std::byte> payload;
  uint64_t offset;
  bool operator==(const ReadChunk&) const = default;
};

// Every chunk next() gives, copied out.
std::vector<ReadChunk> read_all(SpoolReader& reader);

// Writes a spool with one chunk of every kind (and `cupti_records` bytes of
// patterned CUPTI data), closed cleanly. Returns its bytes.
std::vector<std::byte> write_sample_spool(const std::string& path, size_t cupti_records = 200);

// Counts operator new calls while on (alloc_counter.cc replaces the global
// operator new for the test binary). Turning it on resets the count; turning
// it off returns the count.
int count_allocations(bool on);

// The sample's chunk contents, for assertions.
inline constexpr uint32_t kSampleCuptiVersion = 130000;
inline constexpr uint32_t kSampleTid = 4242;
inline constexpr const char* kSampleThreadName = "drain-thread";
inline constexpr const char* kSampleExe = "/usr/bin/python3";
// argv in /proc/PID/cmdline form.
inline const std::string kSampleCmdline = std::string("python3\0train.py\0--epochs=3\0", 28);

}  // namespace strata::format::testing
