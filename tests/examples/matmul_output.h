// Parses gpu_matmul's and torch_matmul.py's one-line result, shared by the CPU
// and GPU tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <regex>
#include <string>

namespace examples_test {

struct MatmulLine {
  std::string mode;
  std::string device;
  int repeats = 0;
  int tile_size = 0;
  double elapsed_ms = 0;
  double checksum = 0;
};

inline std::optional<MatmulLine> parse_matmul_line(const std::string& out) {
  static const std::regex kLine(R"(mode=(\S+) device=(\S+) repeats=([0-9]+) tile_size=([0-9]+) )"
                                R"(elapsed_ms=([0-9]+\.[0-9]{3}) checksum=(-?[0-9]+\.[0-9]{6})\n)");
  std::smatch m;
  if (!std::regex_match(out, m, kLine)) return std::nullopt;
  return MatmulLine{m[1], m[2], std::stoi(m[3]), std::stoi(m[4]), std::stod(m[5]), std::stod(m[6])};
}

inline ::testing::AssertionResult checksums_agree(double a, double b, double rel = 1e-4) {
  double scale = std::max(std::fabs(a), std::fabs(b));
  if (std::fabs(a - b) <= rel * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "checksums " << a << " and " << b << " differ by more than " << rel << " relative";
}

}  // namespace examples_test
