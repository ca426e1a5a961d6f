#include "common/private_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "common/atomic_file.h"

namespace strata {

std::string temp_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

namespace {

// The pid and host hash of PREFIX-PID-HOST-XXXXXX, the name
// make_private_dir gives; false for any other name.
bool parse_private_dir_name(std::string_view name, std::string_view prefix, long* pid,
                            uint32_t* host) {
  if (!name.starts_with(prefix) || name.size() <= prefix.size() + 1 || name[prefix.size()] != '-') {
    return false;
  }
  std::string_view rest = name.substr(prefix.size() + 1);  // PID-HOST-XXXXXX
  size_t dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 10) return false;
  std::string_view pid_text = rest.substr(0, dash);
  std::string_view tail = rest.substr(dash + 1);  // HOST-XXXXXX
  if (tail.size() != 15 || tail[8] != '-') return false;
  for (char c : pid_text) {
    if (c < '0' || c > '9') return false;
  }
  for (char c : tail.substr(0, 8)) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  *pid = std::stol(std::string(pid_text));
  *host = static_cast<uint32_t>(std::stoul(std::string(tail.substr(0, 8)), nullptr, 16));
  return *pid > 0;
}

// Removes the private directories of this prefix that a strata killed with
// SIGKILL (or a crash) left in `parent`, with the spools in them. Safe for
// the reasons remove_stale_temps gives (common/atomic_file.cc): the exact
// name pattern, this host's hash, a process that is gone, the current user's
// own directory (lstat: never a link); remove_all does not follow the links a
// target may have left inside.
void remove_stale_private_dirs(const std::string& parent, std::string_view prefix) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return;
  const uint32_t own_host = host_hash();
  const uid_t uid = ::geteuid();
  std::vector<std::string> stale;
  while (const dirent* entry = ::readdir(d)) {
    long pid = 0;
    uint32_t host = 0;
    if (!parse_private_dir_name(entry->d_name, prefix, &pid, &host)) continue;
    if (host != own_host || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat st;
    if (::fstatat(::dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid) continue;
    stale.push_back(parent + "/" + entry->d_name);
  }
  ::closedir(d);
  for (const auto& path : stale) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
}

}  // namespace

Result<std::string> make_private_dir(std::string_view prefix, const std::string& parent) {
  const std::string dir = parent.empty() ? temp_parent() : parent;
  remove_stale_private_dirs(dir, prefix);
  char host[9];
  std::snprintf(host, sizeof host, "%08x", host_hash());
  std::string pattern = dir + "/";
  pattern.append(prefix);
  pattern += "-" + std::to_string(::getpid()) + "-" + host + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return make_error(std::strerror(errno));
  return pattern;
}

Result<PrivateDir> PrivateDir::make(std::string_view prefix, const std::string& parent) {
  STRATA_ASSIGN_OR_RETURN(std::string path, make_private_dir(prefix, parent));
  return PrivateDir(std::move(path));
}

PrivateDir::~PrivateDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace strata
