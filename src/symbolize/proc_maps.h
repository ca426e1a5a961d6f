// The one parser of /proc/PID/maps text: the CLI's own maps
// (read_proc_maps), and the snapshots strata::instrument and the in-process
// sampler record in their spools' memory-map chunks.
//
// Pure functions, thread-safe; they allocate only what they return.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "symbolize/types.h"

namespace strata::symbolize {

// One line: "start-end perms offset maj:min inode [path]".
struct MapsLine {
  uint64_t start = 0;
  uint64_t end = 0;                      // exclusive
  char perms[4] = {'-', '-', '-', 'p'};  // r, w, x, then p (private) or s (shared)
  uint64_t pgoff = 0;
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;
  uint64_t inode = 0;
  std::string path;  // "" for anonymous memory; "[vdso]", "[stack]", "/lib/x (deleted)", ...

  bool readable() const { return perms[0] == 'r'; }
  bool writable() const { return perms[1] == 'w'; }
  bool executable() const { return perms[2] == 'x'; }
  bool shared() const { return perms[3] == 's'; }
};

// Every line of `text` that parses, in order. Lines that do not (empty lines
// excepted) are skipped and counted in *bad_lines when it is not null.
std::vector<MapsLine> parse_proc_maps(std::string_view text, uint64_t* bad_lines = nullptr);

// The lines as the mappings of an AddressSpace of `pid`, in order (a later
// line wins where it overlaps an earlier one: AddressSpace's rule, so
// concatenated snapshots read as the latest).
AddressSpace address_space_from_maps(int pid, std::string_view text);

}  // namespace strata::symbolize
