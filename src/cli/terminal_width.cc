#include "cli/terminal_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace strata::cli {

size_t parse_columns(std::string_view text) {
  if (text.empty() || text.size() > 6) return 0;
  size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return 0;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  return value <= 100000 ? value : 0;
}

size_t table_width(bool wide) {
  if (wide) return 0;
  if (const char* columns = std::getenv("COLUMNS")) {
    if (size_t n = parse_columns(columns)) return n;
  }
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col;
  }
  return 0;
}

}  // namespace strata::cli
