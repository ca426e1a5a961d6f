// Fuzz test of --filter (issue 21: no input may crash strata). Seeded and
// bounded:
// - random patterns (mutations of real ones: any byte, metacharacters) over
//   profiles with hostile names (analysis/random_profile.h): never a crash;
//   an invalid pattern is an error naming it, a valid one keeps a subset;
// - patterns of the syntax RE2 and ECMAScript share, on short labels where
//   std::regex is safe: exactly the rows std::regex kept before;
// - literal patterns on every label, including 20,000-byte ones: exactly the
//   labels that contain them.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analysis/cpu_pstats.h"
#include "analysis/random_profile.h"

namespace strata::analysis {
namespace {

using testing::Rng;

std::set<std::string> labels_of(const Result<CpuTable>& t) {
  std::set<std::string> out;
  for (const CpuRow& r : t->rows) out.insert(r.label);
  return out;
}

Result<CpuTable> table(const Profile& p, const std::string& filter) {
  CpuTableOptions o;
  o.filter = filter;
  return cpu_function_table(p, o);
}

std::string mutate(Rng& r, std::string s) {
  static const std::string kMeta = "()[]{}*+?|^$.\\-,:0123456789abcxyz_";
  size_t edits = 1 + r.below(4);
  for (size_t e = 0; e < edits; ++e) {
    char c = r.chance(20) ? static_cast<char>(r.below(256)) : kMeta[r.below(kMeta.size())];
    size_t at = s.empty() ? 0 : r.below(s.size() + 1);
    switch (r.below(3)) {
      case 0:
        s.insert(at, 1, c);
        break;
      case 1:
        if (at < s.size()) s.erase(at, 1);
        break;
      default:
        if (at < s.size()) s[at] = c;
        break;
    }
  }
  return s;
}

TEST(CpuPstatsFilterFuzz, RandomPatternsNeverCrash) {
  const std::vector<std::string> kSeeds = {
      "main",   "^x\\.cc", "(alpha|beta)\\)$", "f[0-9]+", "std::.*<.*>",
      "(a+)+b", "[^;]*;",  "\\(f1\\)",         "a{2,5}",  ".*",
  };
  size_t errors = 0;
  size_t valid = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Rng r(seed);
    Profile p = testing::random_sampled_profile(r);
    auto all = table(p, "");
    ASSERT_TRUE(all.ok());
    std::set<std::string> every = labels_of(all);
    for (int i = 0; i < 25; ++i) {
      std::string pattern = mutate(r, kSeeds[r.below(kSeeds.size())]);
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " pattern '" << pattern << "'");
      auto t = table(p, pattern);
      if (!t.ok()) {
        ++errors;
        EXPECT_EQ(t.error().message.rfind("invalid --filter regex '" + pattern + "': ", 0), 0u);
        continue;
      }
      ++valid;
      EXPECT_EQ(t->total_rows, all->total_rows);
      EXPECT_LE(t->filtered_rows, t->total_rows);
      for (const std::string& l : labels_of(t)) EXPECT_TRUE(every.count(l)) << l;
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(errors, 50u);
  EXPECT_GT(valid, 50u);
}

// A pattern in the syntax both engines read the same way: literals, '.',
// classes, groups, alternation, the four quantifiers and anchors.
std::string shared_syntax_pattern(Rng& r, int depth = 0) {
  static const std::string kLiterals = "abcfx01_:.(";
  std::string out;
  size_t atoms = 1 + r.below(4);
  for (size_t i = 0; i < atoms; ++i) {
    std::string atom;
    switch (r.below(depth < 2 ? 6 : 4)) {
      case 0:
      case 1: {
        char c = kLiterals[r.below(kLiterals.size())];
        atom = c == '.' || c == '(' ? std::string("\\") + c : std::string(1, c);
        break;
      }
      case 2:
        atom = ".";
        break;
      case 3:
        atom = r.chance(50) ? "[a-f]" : "[^x0]";
        break;
      default:
        atom = "(" + shared_syntax_pattern(r, depth + 1) + "|" +
               shared_syntax_pattern(r, depth + 1) + ")";
        break;
    }
    static const char* kQuantifiers[] = {"", "", "*", "+", "?", "{1,2}"};
    out += atom + kQuantifiers[r.below(6)];
  }
  if (depth == 0 && r.chance(20)) out = "^" + out;
  if (depth == 0 && r.chance(20)) out += "$";
  return out;
}

TEST(CpuPstatsFilterFuzz, SameRowsAsStdRegexOnSharedSyntax) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Rng r(seed);
    // Short labels without CR (which ECMAScript's '.' skips and RE2's does not).
    Profile p;
    p.rate_hz = 1000;
    for (int i = 0; i < 30; ++i) {
      Frame f;
      f.function = testing::random_name(r, false).substr(0, 30);
      std::erase(f.function, '\r');
      std::erase(f.function, '\n');
      f.file = r.chance(50) ? "a.cc" : "";
      f.line = static_cast<int>(r.below(20));
      p.samples.push_back({1, 1, 0, 1, {p.frames.intern(f)}});
    }
    std::set<std::string> every = labels_of(table(p, ""));
    for (int i = 0; i < 30; ++i) {
      std::string pattern = shared_syntax_pattern(r);
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " pattern '" << pattern << "'");
      // libstdc++'s breadth-first matcher (__polynomial): the same answer as
      // the default depth-first one, without its exponential time on nested
      // quantifiers.
      std::regex before(pattern, std::regex::ECMAScript | std::regex_constants::__polynomial);
      std::set<std::string> expected;
      for (const std::string& l : every) {
        if (std::regex_search(l, before)) expected.insert(l);
      }
      auto t = table(p, pattern);
      ASSERT_TRUE(t.ok()) << t.error().message;
      EXPECT_EQ(labels_of(t), expected);
    }
  }
}

std::string escape(const std::string& literal) {
  std::string out;
  for (char c : literal) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
    if (c == '\0') {
      out += "\\x00";
      continue;
    }
    out += c;
  }
  return out;
}

TEST(CpuPstatsFilterFuzz, LiteralsKeepExactlyTheLabelsHoldingThem) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    Rng r(seed);
    Profile p = testing::random_sampled_profile(r);
    std::set<std::string> every = labels_of(table(p, ""));
    if (every.empty()) continue;
    for (int i = 0; i < 10; ++i) {
      // A piece of a real label, so there is something to find.
      auto it = every.begin();
      std::advance(it, r.below(every.size()));
      size_t from = r.below(it->size());
      std::string literal = it->substr(from, 1 + r.below(12));
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " literal of " << literal.size());
      std::set<std::string> expected;
      for (const std::string& l : every) {
        if (l.find(literal) != std::string::npos) expected.insert(l);
      }
      auto t = table(p, escape(literal));
      ASSERT_TRUE(t.ok()) << t.error().message;
      EXPECT_EQ(labels_of(t), expected);
    }
  }
}

}  // namespace
}  // namespace strata::analysis
