// Private run directories: where the CLI has a producer (the CUDA agent,
// strata::instrument, the in-process sampler) leave its spools. mkdtemp
// makes them mode 0700, since spools hold command lines and stack bytes.
//
// Threading: plain functions; a PrivateDir is owned by one thread.
// Ownership: PrivateDir removes its directory and everything in it when
// destroyed (or moved from: then the new owner does).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace strata {

// $TMPDIR when set and not empty, else /tmp.
std::string temp_parent();

// Creates PARENT/PREFIX-PID-HOST-XXXXXX (mkdtemp; parent "" means
// temp_parent(); HOST as in common/atomic_file.h) and returns its path. First
// removes the directories of the same prefix that a strata on this host, of
// this user, left there when it died without cleaning up (SIGKILL, a crash). The error message is
// strerror(errno) alone: callers say what the directory was for.
Result<std::string> make_private_dir(std::string_view prefix, const std::string& parent = "");

class PrivateDir {
 public:
  // As make_private_dir, owned.
  static Result<PrivateDir> make(std::string_view prefix, const std::string& parent = "");

  PrivateDir(PrivateDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  PrivateDir& operator=(PrivateDir&&) = delete;
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  ~PrivateDir();

  const std::string& path() const { return path_; }

 private:
  explicit PrivateDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace strata
