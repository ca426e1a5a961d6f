// SpoolReader: the CLI's side of the spool (docs/spool-format.md). It checks
// the file header, then hands out chunks whose CRC holds, in file order, and
// counts every kind of damage instead of failing on it: a spool comes from a
// process that may have crashed mid-write, and what it wrote before is data.
//
// Threading: one thread at a time per reader; distinct readers are independent.
// Allocation and ownership: open() maps the file read-only (from_bytes owns
// the bytes it is given); the reader owns the mapping and chunks point into
// it, valid while the reader lives. next() allocates only to copy a payload
// that damage has left misaligned (see Chunk::payload). Memory: mapped pages
// that next() has passed are dropped from the process in 8 MiB steps; they
// fault back in from the file if a view into them is read again.
// Errors: open() fails only on a file that is not a readable spool of a
// major version this build knows; everything after the header is counted in
// stats(), never an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "format/payloads.h"
#include "format/spool_format.h"

namespace strata::format {

struct Chunk {
  ChunkKind kind = ChunkKind::kCuptiBuffer;  // always a kind this build knows
  // 8-byte aligned. Undamaged spools give a view into the file; a payload
  // that damage left misaligned is copied, and the copy lives only until the
  // next call to next().
  std::span<const std::byte> payload;
  uint64_t offset = 0;  // of the chunk header in the file, for messages
  bool in_file = true;  // payload views the file (valid while the reader lives), not a copy
};

struct SpoolStats {
  uint64_t chunks_ok = 0;          // chunks whose CRC held, any kind, the end marker included
  uint64_t payload_bytes = 0;      // payload bytes of those chunks
  uint64_t crc_failures = 0;       // a chunk header in place but its CRC (or length) damaged
  uint64_t unknown_kinds = 0;      // valid chunks of kinds this build does not know: skipped
  uint64_t resyncs = 0;            // times framing was lost and the reader scanned forward
  uint64_t skipped_bytes = 0;      // bytes passed over by those scans
  uint64_t truncated_bytes = 0;    // an incomplete chunk at the end of the file (a crash mid-write)
  uint64_t chunks_after_end = 0;   // valid chunks after the end marker (e.g. a forked child's)
  bool end_seen = false;           // an end-of-stream chunk was read
  bool clean_end = false;          // ... and it was a normal close, not a fatal-signal flush
  std::optional<EndOfStream> end;  // its contents, when it decoded

  // Nothing was lost or damaged and the writer closed normally.
  bool intact() const {
    return crc_failures == 0 && resyncs == 0 && truncated_bytes == 0 && clean_end;
  }
};

class SpoolReader {
 public:
  // Maps `path` and checks its header. Errors are one line naming the file:
  // "run/spool-1.bin: not a strata spool (bad magic)".
  static Result<SpoolReader> open(const std::string& path);
  // The same over bytes in memory; `name` stands for the file in messages.
  static Result<SpoolReader> from_bytes(std::vector<std::byte> bytes, std::string name);

  SpoolReader(SpoolReader&&) noexcept;
  SpoolReader& operator=(SpoolReader&&) noexcept;
  ~SpoolReader();

  const std::string& name() const { return name_; }
  const SpoolHeader& header() const { return header_; }
  uint64_t size() const { return size_; }

  // The next valid chunk of a known kind; false at the end of the file.
  // Unknown kinds, damage and the end marker are consumed and counted.
  bool next(Chunk* chunk);

  // Drops the whole pages of a payload next() handed out, once the caller is
  // done with it, from this process's memory (as next() does behind itself):
  // for callers that read the file once and walk its chunks afterwards.
  void release(std::span<const std::byte> payload);
  // Counts so far; final once next() has returned false.
  const SpoolStats& stats() const { return stats_; }

  // "NAME at offset N (KIND chunk)", to prefix an error about a chunk's payload.
  std::string where(const Chunk& chunk) const;

 private:
  struct Storage;
  enum class Check { kValid, kShortHeader, kBadMarker, kBadLength, kOverrun, kBadCrc };
  struct Scan {
    size_t valid_at;      // first valid chunk found, or npos
    size_t truncated_at;  // first chunk start that runs past the end, or npos
  };

  SpoolReader(std::unique_ptr<Storage> storage, std::string name);
  static Result<SpoolReader> finish_open(std::unique_ptr<Storage> storage, std::string name);
  Status parse_header();
  Check check_at(size_t at) const;
  Scan scan_from(size_t from) const;
  void recover(size_t at, Check check);

  std::unique_ptr<Storage> storage_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;
  std::string name_;
  SpoolHeader header_;
  SpoolStats stats_;
  std::vector<uint64_t> scratch_;  // aligned home for misaligned payloads
};

}  // namespace strata::format
