// Every field is parsed with from_chars against what is left of the line, so
// no line, however damaged, can make a read go past it.
#include "symbolize/proc_maps.h"

#include <charconv>

namespace strata::symbolize {
namespace {

// Hex number at the front of `text`, consuming it.
bool take_hex(std::string_view& text, uint64_t* out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), *out, 16);
  if (r.ec != std::errc() || r.ptr == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(r.ptr - text.data()));
  return true;
}

bool take_dec(std::string_view& text, uint64_t* out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), *out, 10);
  if (r.ec != std::errc() || r.ptr == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(r.ptr - text.data()));
  return true;
}

bool take_char(std::string_view& text, char c) {
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

void skip_spaces(std::string_view& text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
}

bool parse_line(std::string_view line, MapsLine* m) {
  uint64_t maj = 0, min = 0;
  if (!take_hex(line, &m->start) || !take_char(line, '-') || !take_hex(line, &m->end) ||
      m->end < m->start) {
    return false;
  }
  skip_spaces(line);
  if (line.size() < 4) return false;
  for (int i = 0; i < 4; ++i) m->perms[i] = line[i];
  line.remove_prefix(4);
  skip_spaces(line);
  if (!take_hex(line, &m->pgoff)) return false;
  skip_spaces(line);
  if (!take_hex(line, &maj) || !take_char(line, ':') || !take_hex(line, &min)) return false;
  skip_spaces(line);
  if (!take_dec(line, &m->inode)) return false;
  skip_spaces(line);
  m->dev_major = static_cast<uint32_t>(maj);
  m->dev_minor = static_cast<uint32_t>(min);
  m->path = std::string(line);
  return true;
}

}  // namespace

std::vector<MapsLine> parse_proc_maps(std::string_view text, uint64_t* bad_lines) {
  std::vector<MapsLine> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty()) continue;
    MapsLine m;
    if (!parse_line(line, &m)) {
      if (bad_lines) ++*bad_lines;
      continue;
    }
    out.push_back(std::move(m));
  }
  return out;
}

AddressSpace address_space_from_maps(int pid, std::string_view text) {
  AddressSpace space;
  space.pid = pid;
  for (MapsLine& line : parse_proc_maps(text)) {
    Mapping m;
    m.start = line.start;
    m.end = line.end;
    m.pgoff = line.pgoff;
    m.executable = line.executable();
    m.path = std::move(line.path);
    space.mappings.push_back(std::move(m));
  }
  return space;
}

}  // namespace strata::symbolize
