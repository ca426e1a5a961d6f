#include "symbolize/perf_map.h"

#include <algorithm>
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

const PerfMapEntry* PerfMap::find(uint64_t addr) const {
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), addr,
                             [](uint64_t a, const Piece& p) { return a < p.begin; });
  if (it == pieces_.begin()) return nullptr;
  --it;
  if (addr >= it->end) return nullptr;
  return &entries_[it->entry];
}

}  // namespace strata::symbolize
