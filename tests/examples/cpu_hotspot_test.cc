#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_hotspot_lib.h"
#include "run_command.h"

namespace {

using cpu_hotspot::WordCount;
using examples_test::run_command;

// An independent count, written differently from the library on purpose
// (<cctype> classification in the "C" locale, istringstream splitting), to check
// the library's counts rather than repeat them.
std::vector<WordCount> reference_count(const std::vector<std::string>& lines) {
  std::map<std::string, int64_t> counts;
  for (const std::string& line : lines) {
    std::string cleaned;
    for (unsigned char c : line) {
      if (c < 0x80 && std::isalpha(c)) cleaned += static_cast<char>(std::tolower(c));
      if (c < 0x80 && std::isspace(c)) cleaned += ' ';
    }
    std::istringstream words(cleaned);
    for (std::string word; words >> word;) ++counts[word];
  }
  std::vector<WordCount> result;
  for (const auto& [word, count] : counts) result.push_back({word, count});
  std::stable_sort(result.begin(), result.end(),
                   [](const WordCount& a, const WordCount& b) { return a.count > b.count; });
  return result;
}

std::string top10_of(const std::string& output) {
  size_t at = output.find("top10=");
  return at == std::string::npos ? "" : output.substr(at + 6, output.find('\n', at) - at - 6);
}

TEST(CpuHotspotLib, NormalizersHandleEdgeInputs) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},
      {"!!! ,,, ... 42 #", "    "},
      {".,;:!?()[]'\"-=>0123456789", ""},
      {"LAUNCH Kernel gPu", "launch kernel gpu"},
      {"a\tb\nc\rd\ve\ff", "a b c d e f"},
      {"caf\xc3\xa9 na\xc3\xafve \x80\xff", "caf nave "},
      {std::string("nul\0byte", 8), "nulbyte"},
      {"GPU0, (stream)!", "gpu stream"},
  };
  for (const auto& [input, expected] : cases) {
    EXPECT_EQ(cpu_hotspot::normalize_line_slow(input), expected) << "input: " << input;
    EXPECT_EQ(cpu_hotspot::normalize_line_fast(input), expected) << "input: " << input;
  }
}

TEST(CpuHotspotLib, NormalizersAgreeOnRandomBytes) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> length(0, 300);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int i = 0; i < 2000; ++i) {
    std::string input(static_cast<size_t>(length(rng)), '\0');
    for (char& c : input) c = static_cast<char>(byte(rng));
    ASSERT_EQ(cpu_hotspot::normalize_line_slow(input), cpu_hotspot::normalize_line_fast(input));
  }
}

TEST(CpuHotspotLib, NormalizersAgreeOnGeneratedLines) {
  for (const std::string& line : cpu_hotspot::make_lines(500, 3)) {
    ASSERT_EQ(cpu_hotspot::normalize_line_slow(line), cpu_hotspot::normalize_line_fast(line));
  }
}

TEST(CpuHotspotLib, GeneratorIsDeterministicAndNoisy) {
  EXPECT_TRUE(cpu_hotspot::make_lines(0, 1).empty());
  std::vector<std::string> lines = cpu_hotspot::make_lines(200, 5);
  ASSERT_EQ(lines.size(), 200u);
  EXPECT_EQ(lines, cpu_hotspot::make_lines(200, 5));
  EXPECT_NE(lines, cpu_hotspot::make_lines(200, 6));
  // Normalization must matter, or the example would not exercise it.
  size_t changed = std::count_if(lines.begin(), lines.end(), [](const std::string& line) {
    return cpu_hotspot::normalize_line_fast(line) != line;
  });
  EXPECT_GT(changed, 100u);
}

TEST(CpuHotspotLib, CountsMatchAnIndependentCount) {
  std::vector<std::string> lines = cpu_hotspot::make_lines(400, 7);
  std::vector<WordCount> expected = reference_count(lines);
  ASSERT_GE(expected.size(), 10u);
  EXPECT_EQ(cpu_hotspot::count_words_slow(lines), expected);
  EXPECT_EQ(cpu_hotspot::count_words_fast(lines), expected);
}

TEST(CpuHotspotLib, TiesAreBrokenByWord) {
  std::vector<WordCount> expected = {{"z", 2}, {"a", 1}, {"b", 1}, {"y", 1}};
  EXPECT_EQ(cpu_hotspot::count_words_slow({"b Z y", "a z"}), expected);
  EXPECT_EQ(cpu_hotspot::count_words_fast({"b Z y", "a z"}), expected);
}

TEST(CpuHotspotLib, FormatsTopLikePythonRepr) {
  std::vector<WordCount> counts = {{"launch", 6602}, {"gpu", 12}, {"trace", 1}};
  EXPECT_EQ(cpu_hotspot::format_top(counts, 2), "[('launch', 6602), ('gpu', 12)]");
  EXPECT_EQ(cpu_hotspot::format_top(counts, 10), "[('launch', 6602), ('gpu', 12), ('trace', 1)]");
  EXPECT_EQ(cpu_hotspot::format_top({}, 10), "[]");
}

TEST(CpuHotspotCli, PrintsOneLineInTheSeedsFormat) {
  auto result = run_command({CPU_HOTSPOT_BIN, "--mode", "slow", "--lines", "6000"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(std::regex_match(
      result.out, std::regex(R"(mode=slow lines=6000 elapsed_ms=[0-9]+\.[0-9]{3} )"
                             R"(top10=\[\('[a-z]+', [0-9]+\)(, \('[a-z]+', [0-9]+\)){9}\]\n)")))
      << result.out;
  EXPECT_EQ(result.err, "");
}

TEST(CpuHotspotCli, SlowAndFastPrintTheSameTop10) {
  auto slow = run_command({CPU_HOTSPOT_BIN, "--mode", "slow", "--lines", "6000"});
  auto fast = run_command({CPU_HOTSPOT_BIN, "--mode=fast", "--lines=6000"});
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_EQ(fast.out.rfind("mode=fast lines=6000 elapsed_ms=", 0), 0u) << fast.out;
  EXPECT_FALSE(top10_of(slow.out).empty());
  EXPECT_EQ(top10_of(slow.out), top10_of(fast.out));
}

TEST(CpuHotspotCli, Top10IsTheIndependentCountOfItsLines) {
  for (const char* mode : {"slow", "fast"}) {
    auto result = run_command({CPU_HOTSPOT_BIN, "--mode", mode, "--lines", "1500", "--seed", "99"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.rfind(std::string("mode=") + mode + " lines=1500 ", 0), 0u) << result.out;
    EXPECT_EQ(top10_of(result.out),
              cpu_hotspot::format_top(reference_count(cpu_hotspot::make_lines(1500, 99)), 10));
  }
  auto by_default = run_command({CPU_HOTSPOT_BIN, "--mode", "fast", "--lines", "300"});
  EXPECT_EQ(top10_of(by_default.out),
            cpu_hotspot::format_top(
                reference_count(cpu_hotspot::make_lines(300, cpu_hotspot::kDefaultSeed)), 10));
}

// The speed goal (fast >= 2x slow at 6000 lines) is a benchmark, not a timed
// unit test: bench/cpu_hotspot_ratio.sh measures it interleaved.

TEST(CpuHotspotCli, EchoesTheLineCount) {
  auto none = run_command({CPU_HOTSPOT_BIN, "--mode", "fast", "--lines", "0"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(
      std::regex_match(none.out, std::regex(R"(mode=fast lines=0 elapsed_ms=\S+ top10=\[\]\n)")))
      << none.out;
  auto few = run_command({CPU_HOTSPOT_BIN, "--mode", "slow", "--lines", "17"});
  EXPECT_EQ(few.out.rfind("mode=slow lines=17 ", 0), 0u) << few.out;
}

TEST(CpuHotspotCli, InvalidFlagsExitWithUsage) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--lines", "100"},
      {"--mode", "medium"},
      {"--mode"},
      {"--mode", "slow", "--lines", "-1"},
      {"--mode", "slow", "--lines", "12abc"},
      {"--mode", "slow", "--lines", "99999999999999999999"},
      {"--mode", "slow", "--seed", "x"},
      {"--mode", "slow", "--bogus"},
      {"--mode", "slow", "extra"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv = {CPU_HOTSPOT_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = run_command(argv);
    std::string shown = ::testing::PrintToString(args);
    EXPECT_EQ(result.exit_code, 2) << shown;
    EXPECT_EQ(result.out, "") << shown;
    EXPECT_NE(result.err.find("usage: cpu_hotspot"), std::string::npos) << shown << result.err;
  }
  auto help = run_command({CPU_HOTSPOT_BIN, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: cpu_hotspot"), std::string::npos);
}

}  // namespace
