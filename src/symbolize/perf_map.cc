#include "symbolize/perf_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace strata::symbolize {
namespace {

// Parses up to 16 hex digits; false on an empty field, a non-hex character
// or more than 64 bits.
bool parse_hex(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 16) return false;
  uint64_t value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return false;
    }
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  *out = value;
  return true;
}

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::string_view next_field(std::string_view& rest) {
  size_t begin = 0;
  while (begin < rest.size() && is_space(rest[begin])) ++begin;
  size_t end = begin;
  while (end < rest.size() && !is_space(rest[end])) ++end;
  std::string_view field = rest.substr(begin, end - begin);
  rest.remove_prefix(end);
  return field;
}

}  // namespace

PerfMap PerfMap::parse(std::string_view text) {
  PerfMap map;
  // Overlay: begin -> (end, entry). Each new entry erases what it covers of
  // earlier ones, splitting partly covered pieces.
  std::map<uint64_t, std::pair<uint64_t, size_t>> overlay;
  while (!text.empty()) {
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view rest = line;
    std::string_view start_field = next_field(rest);
    if (start_field.empty() && rest.empty()) continue;  // blank line
    std::string_view size_field = next_field(rest);
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    uint64_t start = 0;
    uint64_t size = 0;
    if (!parse_hex(start_field, &start) || !parse_hex(size_field, &size) || size == 0 ||
        start + size < start) {
      ++map.bad_lines_;
      continue;
    }
    uint64_t end = start + size;
    size_t index = map.entries_.size();
    map.entries_.push_back(PerfMapEntry{start, size, std::string(rest)});

    auto it = overlay.lower_bound(start);
    if (it != overlay.begin()) {
      auto prev = std::prev(it);
      if (prev->second.first > start) {
        // prev starts before us and reaches into us: keep its head, and its
        // tail when it reaches past our end.
        uint64_t prev_end = prev->second.first;
        size_t prev_entry = prev->second.second;
        prev->second.first = start;
        if (prev_end > end) overlay.emplace(end, std::make_pair(prev_end, prev_entry));
      }
    }
    it = overlay.lower_bound(start);
    while (it != overlay.end() && it->first < end) {
      uint64_t piece_end = it->second.first;
      size_t piece_entry = it->second.second;
      it = overlay.erase(it);
      if (piece_end > end) {
        overlay.emplace(end, std::make_pair(piece_end, piece_entry));
        break;
      }
    }
    overlay.emplace(start, std::make_pair(end, index));
  }
  map.pieces_.reserve(overlay.size());
  for (const auto& [begin, value] : overlay) {
    map.pieces_.push_back(Piece{begin, value.first, value.second});
  }
  return map;
}

Result<PerfMap> PerfMap::read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read perf map " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return make_error("error reading perf map " + path);
  return parse(buffer.str());
}

Result<PerfMap> PerfMap::read_owned_file(const std::string& path, uint32_t owner_uid,
                                         FileIdentity* identity) {
  // O_NONBLOCK: a FIFO planted under the name must not hang strata.
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return make_error("perf map '" + path + "': a symlink; not read");
    return make_error("cannot read perf map " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_uid != owner_uid) {
    why = "owned by uid " + std::to_string(st.st_uid) + ", not the target's uid " +
          std::to_string(owner_uid);
  } else if (st.st_nlink != 1) {
    why = std::to_string(st.st_nlink) + " hard links";
  }
  if (!why.empty()) {
    close(fd);
    return make_error("perf map '" + path + "': " + why + "; not read");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return make_error("error reading perf map " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  if (identity) *identity = FileIdentity{static_cast<uint64_t>(st.st_dev), st.st_ino};
  return parse(text);
}

bool remove_if_same(const std::string& path, const FileIdentity& identity) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_dev) != identity.dev || st.st_ino != identity.ino) return false;
  return unlink(path.c_str()) == 0;
}

const PerfMapEntry* PerfMap::find(uint64_t addr) const {
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), addr,
                             [](uint64_t a, const Piece& p) { return a < p.begin; });
  if (it == pieces_.begin()) return nullptr;
  --it;
  if (addr >= it->end) return nullptr;
  return &entries_[it->entry];
}

}  // namespace strata::symbolize
