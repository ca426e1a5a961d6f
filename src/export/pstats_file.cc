#include "export/pstats_file.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "analysis/cpu_callers.h"
#include "analysis/cpu_pstats.h"

namespace strata::exporter {
namespace {

// The few marshal types a stats dict needs (CPython's Python/marshal.c).
class Marshal {
 public:
  void dict_begin() { out_ += '{'; }
  void dict_end() { out_ += '0'; }  // TYPE_NULL closes a dict
  void tuple(uint32_t size) {
    out_ += '(';
    u32(size);
  }
  void integer(uint64_t v) {
    if (v <= 0x7fffffff) {
      out_ += 'i';
      u32(static_cast<uint32_t>(v));
      return;
    }
    // TYPE_LONG: a digit count, then 15-bit digits, least significant first.
    std::vector<uint16_t> digits;
    for (; v != 0; v >>= 15) digits.push_back(static_cast<uint16_t>(v & 0x7fff));
    out_ += 'l';
    u32(static_cast<uint32_t>(digits.size()));
    for (uint16_t d : digits) {
      out_ += static_cast<char>(d & 0xff);
      out_ += static_cast<char>(d >> 8);
    }
  }
  void real(double v) {
    out_ += 'g';  // TYPE_BINARY_FLOAT: 8 bytes, little-endian IEEE 754
    uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  void text(const std::string& s) {
    std::string utf8 = valid_utf8(s);
    out_ += 'u';
    u32(static_cast<uint32_t>(utf8.size()));
    out_ += utf8;
  }
  std::string take() { return std::move(out_); }

 private:
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  // Each byte that does not begin a well-formed UTF-8 sequence becomes U+FFFD.
  static std::string valid_utf8(const std::string& s) {
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
      const auto c = static_cast<unsigned char>(s[i]);
      size_t len = c < 0x80           ? 1
                   : (c >> 5) == 0x6  ? 2
                   : (c >> 4) == 0xe  ? 3
                   : (c >> 3) == 0x1e ? 4
                                      : 0;
      bool ok = len > 0 && i + len <= s.size() && !(len == 2 && c < 0xc2);
      for (size_t k = 1; ok && k < len; ++k) {
        ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
      }
      if (ok && len == 3) {  // no overlong forms, no surrogates
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
      }
      if (ok && len == 4) {  // no overlong forms, nothing above U+10FFFF
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        ok = c <= 0xf4 && !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
      }
      if (ok) {
        out.append(s, i, len);
        i += len;
      } else {
        out += "\xef\xbf\xbd";
        ++i;
      }
    }
    return out;
  }
  std::string out_;
};

// The key pstats labels as the report does (analysis::pstats_label): a
// function with neither file nor module is pstats' built-in form,
// ("~", 0, "<name>"), which it prints as "{name}".
void function_key(Marshal& m, const analysis::Function& f) {
  m.tuple(3);
  if (f.file.empty() && f.module.empty()) {
    m.text("~");
    m.integer(0);
    m.text("<" + f.name + ">");
    return;
  }
  m.text(f.file_or_module());
  m.integer(static_cast<uint64_t>(f.line > 0 ? f.line : 0));
  m.text(f.name);
}

}  // namespace

std::string pstats_file(const analysis::Profile& profile) {
  auto table = analysis::cpu_function_table(profile, {});  // no filter: cannot fail
  std::map<uint32_t, std::vector<const analysis::CpuEdge*>> callers;
  const auto edges = analysis::cpu_call_edges(profile, {});
  for (const auto& e : edges) callers[e.callee].push_back(&e);
  Marshal m;
  m.dict_begin();
  if (table) {
    for (const auto& row : table->rows) {
      function_key(m, table->functions[row.function]);
      m.tuple(5);
      m.integer(row.primitive_calls);
      m.integer(row.ncalls);
      m.real(row.tottime_s);
      m.real(row.cumtime_s);
      m.dict_begin();
      for (const auto* e : callers[row.function]) {
        function_key(m, table->functions[e->caller]);
        m.tuple(4);
        m.integer(e->ncalls);
        m.integer(e->primitive_calls);
        m.real(e->tottime_s);
        m.real(e->cumtime_s);
      }
      m.dict_end();
    }
  }
  m.dict_end();
  return m.take();
}

}  // namespace strata::exporter
