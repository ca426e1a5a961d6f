#include "common/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "common/process.h"
#include "common/strings.h"

namespace strata {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempMarker = ".strata-";
// Keeps ".NAME.strata-PID-HOST-RANDOM" under NAME_MAX (255) for long names.
constexpr size_t kMaxNameInTemp = 200;

std::string in_quotes(const std::string& path) {
  return "'" + printable(path) + "'";
}

Error errno_error(std::string_view what, const std::string& path, int err) {
  return make_error(std::string(what) + " " + in_quotes(path) + ": " + std::strerror(err));
}

Error exists_error(const std::string& path) {
  return make_error(printable(path) + " exists; use --force to overwrite");
}

std::string hex8(uint32_t value) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", value);
  return buf;
}

bool all_hex(std::string_view text) {
  if (text.size() != 8) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

fs::path directory_of(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// Moves `from` onto `to` without replacing anything at `to`; 0 or an errno
// (EEXIST when `to` is taken, a dangling symlink included).
int rename_noreplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  // Filesystems without RENAME_NOREPLACE (some FUSE and network ones): link()
  // also fails with EEXIST on any entry, atomically.
  if (::link(from.c_str(), to.c_str()) == 0) {
    ::unlink(from.c_str());
    return 0;
  }
  if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS) return errno;
  // No hard links either (vfat): check, then rename; a race is possible here only.
  struct stat st;
  if (::lstat(to.c_str(), &st) == 0) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

void sync_directory(const fs::path& dir) {
  // Makes the rename itself durable; best effort (some filesystems refuse).
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

uint32_t host_hash() {
  // FNV-1a: stable across runs and builds, which std::hash is not promised to be.
  uint32_t h = 2166136261u;
  for (unsigned char c : host_name()) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

bool parse_temp_name(std::string_view name, long* pid, uint32_t* host) {
  // ".X.strata-PID-HOST-RANDOM"
  if (name.size() < 2 || name[0] != '.') return false;
  size_t marker = name.rfind(kTempMarker);
  if (marker == std::string_view::npos || marker < 2) return false;
  std::string_view rest = name.substr(marker + kTempMarker.size());
  size_t dash1 = rest.find('-');
  if (dash1 == std::string_view::npos || dash1 == 0 || dash1 > 10) return false;
  std::string_view pid_text = rest.substr(0, dash1);
  for (char c : pid_text) {
    if (c < '0' || c > '9') return false;
  }
  std::string_view tail = rest.substr(dash1 + 1);
  if (tail.size() != 17 || tail[8] != '-') return false;
  if (!all_hex(tail.substr(0, 8)) || !all_hex(tail.substr(9))) return false;
  long value = std::stol(std::string(pid_text));
  if (value <= 0) return false;
  *pid = value;
  *host = static_cast<uint32_t>(std::stoul(std::string(tail.substr(0, 8)), nullptr, 16));
  return true;
}

// Why removing these is safe:
//  - the name matches exactly what create() makes and nothing a user names a
//    file by accident, and only regular files are touched (lstat: not links);
//  - the file belongs to the user running strata, so one user never deletes
//    another's files, even in a shared sticky directory;
//  - the host hash in the name is this machine's, so a pid is checked in the
//    pid space it came from (two hosts writing into one NFS directory do not
//    judge each other's files; containers with their own pid namespace also
//    have their own host name as a rule);
//  - the process is gone (kill(pid, 0) says ESRCH), so no one can be writing
//    the file or about to rename it. A pid reused since only keeps a stale file
//    longer, never removes a live one.
int remove_stale_temps(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  const uint32_t own_host = host_hash();
  const long own_pid = ::getpid();
  const uid_t uid = ::geteuid();
  int removed = 0;
  while (const dirent* entry = ::readdir(d)) {
    long pid = 0;
    uint32_t host = 0;
    if (!parse_temp_name(entry->d_name, &pid, &host)) continue;
    if (host != own_host || pid == own_pid) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat st;
    if (::fstatat(::dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != uid) continue;
    if (::unlinkat(::dirfd(d), entry->d_name, 0) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

Result<AtomicFile> AtomicFile::create(const std::string& path, Existing existing) {
  if (path.empty()) return make_error("empty output file name");
  std::string name = fs::path(path).filename().string();
  struct stat st;
  bool taken = ::lstat(path.c_str(), &st) == 0;
  if ((taken && S_ISDIR(st.st_mode)) || name.empty() || name == "." || name == "..") {
    return make_error("cannot write " + in_quotes(path) + ": it is a directory");
  }
  if (taken && existing == Existing::kRefuse) return exists_error(path);

  fs::path dir = directory_of(path);
  remove_stale_temps(dir.string());
  std::string prefix = "." + name.substr(0, kMaxNameInTemp) + std::string(kTempMarker) +
                       std::to_string(::getpid()) + "-" + hex8(host_hash()) + "-";
  std::random_device entropy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string temp = (dir / (prefix + hex8(entropy()))).string();
    // O_NOFOLLOW with O_EXCL: a link planted at the name is EEXIST, never followed.
    int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return AtomicFile(path, std::move(temp), fd, existing);
    if (errno != EEXIST) return errno_error("cannot create", path, errno);
  }
  return errno_error("cannot create", path, EEXIST);
}

AtomicFile::AtomicFile(std::string path, std::string temp_path, int fd, Existing existing)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd), existing_(existing) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)),
      existing_(other.existing_),
      published_(std::exchange(other.published_, true)) {
  other.temp_path_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    temp_path_ = std::move(other.temp_path_);
    other.temp_path_.clear();
    fd_ = std::exchange(other.fd_, -1);
    existing_ = other.existing_;
    published_ = std::exchange(other.published_, true);
  }
  return *this;
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!published_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
}

Status AtomicFile::write(std::string_view data) {
  if (fd_ < 0) return errno_error("cannot write", path_, EBADF);
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error("cannot write", path_, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Ok{};
}

void AtomicFile::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status AtomicFile::sync_and_close() {
  if (published_ || temp_path_.empty()) return errno_error("cannot write", path_, EBADF);
  int fd = fd_ >= 0 ? std::exchange(fd_, -1) : ::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    discard();
    return errno_error("cannot write", path_, err);
  }
  // close() can report a deferred write error (NFS), fsync() the rest.
  int err = ::fsync(fd) != 0 ? errno : 0;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    discard();
    return errno_error("cannot write", path_, err);
  }
  return Ok{};
}

Status AtomicFile::publish() {
  STRATA_TRY(sync_and_close());
  int err = existing_ == Existing::kReplace
                ? (::rename(temp_path_.c_str(), path_.c_str()) == 0 ? 0 : errno)
                : rename_noreplace(temp_path_, path_);
  if (err == EEXIST) {
    discard();
    return exists_error(path_);
  }
  if (err != 0) {
    discard();
    return errno_error(err == EISDIR ? "cannot write" : "cannot move the finished file to", path_,
                       err);
  }
  published_ = true;
  temp_path_.clear();
  sync_directory(directory_of(path_));
  return Ok{};
}

Status AtomicFile::publish_numbered(const std::function<std::string(int)>& name_for, int first) {
  STRATA_TRY(sync_and_close());
  constexpr int kTries = 1'000'000;
  for (int n = first; n < first + kTries; ++n) {
    std::string candidate = name_for(n);
    int err = rename_noreplace(temp_path_, candidate);
    if (err == EEXIST) continue;
    if (err != 0) {
      discard();
      return errno_error("cannot move the finished file to", candidate, err);
    }
    path_ = std::move(candidate);
    published_ = true;
    temp_path_.clear();
    sync_directory(directory_of(path_));
    return Ok{};
  }
  discard();
  return make_error("no free file name for " + in_quotes(path_) + " after " +
                    std::to_string(kTries) + " tries");
}

Status write_file_atomically(const std::string& path, std::string_view data, Existing existing) {
  STRATA_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::create(path, existing));
  STRATA_TRY(file.write(data));
  return file.publish();
}

}  // namespace strata
