// The seed's Case 1 (cpu_hotspot_case.py) in C++: generate noisy text, normalize
// it and count words, once with a deliberately slow normalizer and once with an
// efficient one. The main program is cpu_hotspot.cpp; this library exists so that
// tests can check the generator, both normalizers and the counts directly.
//
// Everything here is single-threaded, pure and deterministic for a given seed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cpu_hotspot {

inline constexpr uint64_t kDefaultSeed = 20260404;

struct WordCount {
  std::string word;
  int64_t count = 0;

  bool operator==(const WordCount&) const = default;
};

// `n` lines of 12..31 vocabulary words each, with upper-case letters, digits and
// punctuation mixed in so that normalization changes the result.
std::vector<std::string> make_lines(int64_t n, uint64_t seed);

// Both return the line with ASCII letters lower-cased, ASCII whitespace turned
// into ' ' and every other byte dropped. They must agree on every input.
//
// The slow one rebuilds the result string for every kept character, as the seed's
// `_normalize_line_slow` does, so that it dominates slow mode's profile. It is kept
// out of line so that CPU profilers attribute its samples to it by name.
__attribute__((noinline)) std::string normalize_line_slow(const std::string& line);
std::string normalize_line_fast(std::string_view line);

// Normalize every line and count the space-separated words. The result is sorted
// by count, descending, then by word, so that ties come out the same every run.
std::vector<WordCount> count_words_slow(const std::vector<std::string>& lines);
std::vector<WordCount> count_words_fast(const std::vector<std::string>& lines);

// The first `k` entries of a sorted count, formatted like Python's repr of a
// list of (str, int) tuples: [('launch', 6602), ('occupancy', 6594)].
std::string format_top(const std::vector<WordCount>& counts, size_t k);

}  // namespace cpu_hotspot
