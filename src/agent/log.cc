#include "agent/log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace strata::agent {

void log_line(const char* format, ...) {
  int saved_errno = errno;
  char line[1024];
  constexpr char kPrefix[] = "strata agent: ";
  size_t length = sizeof(kPrefix) - 1;
  std::memcpy(line, kPrefix, length);
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(line + length, sizeof(line) - length - 1, format, args);
  va_end(args);
  if (n > 0)
    length += static_cast<size_t>(n) < sizeof(line) - length - 1 ? static_cast<size_t>(n)
                                                                 : sizeof(line) - length - 2;
  line[length++] = '\n';
  size_t done = 0;
  while (done < length) {
    ssize_t w = ::write(STDERR_FILENO, line + done, length - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  errno = saved_errno;
}

}  // namespace strata::agent
