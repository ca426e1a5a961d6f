#include "fuzz_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace strata::fuzz {
namespace {

[[noreturn]] void die(const std::string& what) {
  std::perror(("strata fuzz: " + what).c_str());
  std::abort();
}

void remove_scratch() {
  std::error_code ignored;
  std::filesystem::remove_all(scratch_dir(), ignored);
}

}  // namespace

const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/strata-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) die("cannot make a directory '" + pattern + "'");
    return pattern;
  }();
  static const bool cleanup_registered = (std::atexit(remove_scratch), true);
  (void)cleanup_registered;
  return dir;
}

std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  std::string path = scratch_dir() + "/" + name;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) die("cannot write '" + path + "'");
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) die("cannot write '" + path + "'");
    done += static_cast<size_t>(n);
  }
  close(fd);
  return path;
}

}  // namespace strata::fuzz
