#include "cpu_hotspot_lib.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <unordered_map>

namespace cpu_hotspot {
namespace {

// The seed's words come first; the rest make the counts realistic (about 6500 per
// word at 6000 lines, as in the seed's output).
constexpr std::array<std::string_view, 20> kVocabulary = {
    "launch", "occupancy", "stream",      "profile", "memory",   "torch",    "kernel",
    "trace",  "gpu",       "synchronize", "cuda",    "tensor",   "warp",     "latency",
    "cache",  "thread",    "block",       "sample",  "timeline", "bandwidth"};

constexpr std::string_view kTrailing = ",.;:!?";
constexpr std::string_view kLeading = "([\"'";
// Tokens made only of non-letters: they normalize to nothing and must not count.
constexpr std::array<std::string_view, 5> kJunk = {"--", "42", "#", "...", "=>"};

// splitmix64: tiny, fast, and the same sequence everywhere, unlike the standard
// distributions, whose output is implementation-defined.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // The modulo bias is below 2^-50 for these ranges: irrelevant here.
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Byte -> normalized byte, 0 meaning "drop".
constexpr std::array<char, 256> make_table() {
  std::array<char, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) table[c] = static_cast<char>(c);
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = static_cast<char>(c - 'A' + 'a');
  for (char c : {' ', '\t', '\n', '\r', '\v', '\f'}) table[static_cast<unsigned char>(c)] = ' ';
  return table;
}
constexpr std::array<char, 256> kTable = make_table();

// Normalizes buf[0, n) in place and returns the new length: one table lookup and
// one store per byte, no allocation.
size_t normalize_in_place(char* buf, size_t n) {
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = kTable[static_cast<unsigned char>(buf[i])];
    buf[out] = c;
    out += c != 0;
  }
  return out;
}

template <typename Fn>
void for_each_word(std::string_view text, Fn&& fn) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ') ++i;
    if (i > start) fn(text.substr(start, i - start));
  }
}

template <typename Map>
std::vector<WordCount> sorted_counts(const Map& counts) {
  std::vector<WordCount> result;
  result.reserve(counts.size());
  for (const auto& [word, count] : counts) result.push_back({std::string(word), count});
  std::sort(result.begin(), result.end(), [](const WordCount& a, const WordCount& b) {
    return a.count != b.count ? a.count > b.count : a.word < b.word;
  });
  return result;
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace

std::vector<std::string> make_lines(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<std::string> lines;
  lines.reserve(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) {
    std::string line;
    size_t words = 12 + rng.below(20);
    for (size_t w = 0; w < words; ++w) {
      if (w > 0) {
        size_t sep = rng.below(10);
        line += sep == 0 ? "\t" : sep == 1 ? "  " : " ";
      }
      if (rng.below(24) == 0) {
        line += kJunk[rng.below(kJunk.size())];
        line += ' ';
      }
      if (rng.below(16) == 0) line += kLeading[rng.below(kLeading.size())];
      std::string word(kVocabulary[rng.below(kVocabulary.size())]);
      size_t shape = rng.below(16);
      if (shape < 2) {
        for (char& c : word) c = static_cast<char>(c - 'a' + 'A');
      } else if (shape < 4) {
        word[0] = static_cast<char>(word[0] - 'a' + 'A');
      }
      line += word;
      if (rng.below(32) == 0) line += static_cast<char>('0' + rng.below(10));
      if (rng.below(8) == 0) line += kTrailing[rng.below(kTrailing.size())];
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

// Slow the way the seed's Python is, and in its own code: for each character
// it searches the alphabet to learn what the character is, and it grows the
// result one character at a time by copying the whole prefix into a new
// buffer (quadratic). The copy loop is written out and kept from becoming a
// memcpy call (no-tree-loop-distribute-patterns), so profilers charge the
// time to this function, as cProfile charges _normalize_line_slow's tottime.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) std::string normalize_line_slow(
    const std::string& line) {
  static constexpr char kUpper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static constexpr char kLower[] = "abcdefghijklmnopqrstuvwxyz";
  std::string result(line.size(), '\0');
  std::string next(line.size(), '\0');
  size_t length = 0;
  for (char c : line) {
    char kept = 0;
    for (int i = 0; i < 26 && kept == 0; ++i) {
      if (c == kUpper[i] || c == kLower[i]) kept = kLower[i];
    }
    if (kept == 0 && is_space(c)) kept = ' ';
    if (kept == 0) continue;
    for (size_t i = 0; i < length; ++i) next[i] = result[i];
    next[length++] = kept;
    result.swap(next);
  }
  result.resize(length);
  return result;
}

std::string normalize_line_fast(std::string_view line) {
  std::string result(line);
  result.resize(normalize_in_place(result.data(), result.size()));
  return result;
}

std::vector<WordCount> count_words_slow(const std::vector<std::string>& lines) {
  std::map<std::string, int64_t> counts;
  for (const std::string& line : lines) {
    std::string normalized = normalize_line_slow(line);
    for_each_word(normalized, [&](std::string_view word) { ++counts[std::string(word)]; });
  }
  return sorted_counts(counts);
}

std::vector<WordCount> count_words_fast(const std::vector<std::string>& lines) {
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> counts;
  std::string buf;
  for (const std::string& line : lines) {
    buf.assign(line);
    buf.resize(normalize_in_place(buf.data(), buf.size()));
    for_each_word(buf, [&](std::string_view word) {
      auto it = counts.find(word);
      if (it == counts.end()) it = counts.emplace(std::string(word), 0).first;
      ++it->second;
    });
  }
  return sorted_counts(counts);
}

std::string format_top(const std::vector<WordCount>& counts, size_t k) {
  std::string out = "[";
  for (size_t i = 0; i < std::min(k, counts.size()); ++i) {
    if (i > 0) out += ", ";
    out += "('" + counts[i].word + "', " + std::to_string(counts[i].count) + ")";
  }
  out += "]";
  return out;
}

}  // namespace cpu_hotspot
