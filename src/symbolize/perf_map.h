// Reader of /tmp/perf-PID.map, the text symbol file JITs write for perf
// (tools/perf/Documentation/jit-interface.txt): one `START SIZE name` line
// per region, START and SIZE in hex without 0x, the name the rest of the
// line. CPython 3.12+ writes one line per trampoline, named
// `py::<qualname>:<filename>` (shared/reference/cpu-sampling.md).
//
// The file comes from the profiled process, so it is untrusted: bad lines are
// counted and skipped, never fatal. Lookups follow the file's order: a later
// line wins over the parts of earlier lines it overlaps (a JIT reusing
// freed code memory).
//
// Threading: a PerfMap is immutable after parsing; concurrent lookups are
// safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace strata::symbolize {

struct PerfMapEntry {
  uint64_t start = 0;  // of the region as its line gave it
  uint64_t size = 0;
  std::string name;
};

// Which file a path named when it was read (st_dev, st_ino).
struct FileIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
};

// Removes `path` if it still names the file `identity` describes, not one
// put in its place since it was read. True when removed.
bool remove_if_same(const std::string& path, const FileIdentity& identity);

class PerfMap {
 public:
  PerfMap() = default;

  // Parses the whole text of a perf map file. Never fails: lines that are
  // not `HEX HEX name` (or whose range wraps around) are counted in
  // bad_lines().
  static PerfMap parse(std::string_view text);
  // Reads and parses a file; an error names the file when it cannot be read.
  static Result<PerfMap> read_file(const std::string& path);

  // Reads `path` only if it is the file a process running as `owner_uid`
  // made: a regular file with one link, owned by that uid, reached without
  // following a symlink (O_NOFOLLOW, then fstat of what was opened). /tmp is
  // everyone's: as root, strata must not take another user's planted file
  // for the target's. The error names the file and says why it was refused;
  // *identity (when given) is set to the file read, for remove_if_same.
  static Result<PerfMap> read_owned_file(const std::string& path, uint32_t owner_uid,
                                         FileIdentity* identity = nullptr);

  // The entry covering addr, or nullptr.
  const PerfMapEntry* find(uint64_t addr) const;

  bool empty() const { return pieces_.empty(); }
  size_t entry_count() const { return entries_.size(); }
  size_t bad_lines() const { return bad_lines_; }
  const std::vector<PerfMapEntry>& entries() const { return entries_; }

 private:
  // A non-overlapping part of one entry's range after later entries have
  // been laid over earlier ones; sorted by begin.
  struct Piece {
    uint64_t begin;
    uint64_t end;  // exclusive
    size_t entry;  // index into entries_
  };

  std::vector<PerfMapEntry> entries_;
  std::vector<Piece> pieces_;
  size_t bad_lines_ = 0;
};

}  // namespace strata::symbolize
