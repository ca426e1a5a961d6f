// Every file strata writes for the user (traces, exports, reports) is made
// the same way: written under a temporary name beside its final name, synced,
// then renamed into place. So
//   - a symlink at the final name is never written through: rename() replaces
//     the link itself, and without --force any entry at the name, a dangling
//     link included, is "exists";
//   - a failed or interrupted write (full disk, EFBIG, a signal) leaves the old
//     file as it was and no half-written one under the final name;
//   - the temporary name is random and created with O_EXCL | O_NOFOLLOW, so no
//     one can plant a link or file there in advance.
//
// Temporary names are ".NAME.strata-PID-HOST-RANDOM" (HOST and RANDOM 8 hex
// digits each; HOST a hash of the host name). A strata killed by SIGKILL leaves
// one behind; remove_stale_temps() clears those (its comment says why that is
// safe), and create() calls it on the target's directory.
//
// Contract: an AtomicFile is used from one thread; it owns its temporary file
// and removes it on destruction unless it was published.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace strata {

// What publishing does when the final name is taken.
enum class Existing {
  kRefuse,   // "NAME exists; use --force to overwrite" (a dangling symlink is taken too)
  kReplace,  // --force: the entry is replaced (a symlink itself, never its target)
};

class AtomicFile {
 public:
  // Checks that `path` can be written before anything else happens (the
  // recording verbs call this before they run the target): not empty, not a
  // directory, not taken unless kReplace; then creates the temporary file in
  // its directory, which fails at once for a missing or unwritable directory.
  // Mode 0666 & ~umask, like any file the user creates (not mkstemp's 0600).
  static Result<AtomicFile> create(const std::string& path, Existing existing);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // unpublished: closes and removes the temporary file

  // The final name (after publish_numbered(): the name it took).
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

  // Appends all of `data` to the temporary file. On error (ENOSPC, EFBIG...)
  // "cannot write 'PATH': REASON"; the temporary file stays until destruction.
  Status write(std::string_view data);

  // For writers that open temp_path() themselves (SQLite): closes our
  // descriptor; publish() reopens the file to sync it.
  void close_fd();

  // Syncs the temporary file and renames it onto path() as `existing` says.
  // On any error the temporary file is removed and the final name is untouched.
  Status publish();

  // For names strata picks itself (strata-bench1.sqlite, ...): moves the file
  // to name_for(first), or on EEXIST to name_for(first + 1), and so on, each
  // without replacing anything, so that parallel runs get distinct files
  // however they interleave. path() is then the name taken.
  Status publish_numbered(const std::function<std::string(int)>& name_for, int first);

 private:
  AtomicFile(std::string path, std::string temp_path, int fd, Existing existing);
  Status sync_and_close();
  void discard();

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  Existing existing_ = Existing::kRefuse;
  bool published_ = false;
};

// Writes `data` to `path` through an AtomicFile.
Status write_file_atomically(const std::string& path, std::string_view data, Existing existing);

// The pid and host hash of a strata temporary file name, when `name` matches
// the pattern exactly (".X.strata-PID-HOST-RANDOM", X not empty); else false.
bool parse_temp_name(std::string_view name, long* pid, uint32_t* host);

// This machine's host hash, as it appears in temporary names.
uint32_t host_hash();

// Removes the temporary files in `dir` left by strata processes that died
// without cleaning up (SIGKILL, power loss of a sandbox...). Returns how many.
int remove_stale_temps(const std::string& dir);

}  // namespace strata
