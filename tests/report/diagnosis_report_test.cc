#include "report/diagnosis_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::report {
namespace {

// What clang mangles a lambda inside libtorch's templates to, which no
// demangler here reads (seen in diagnose's CPU line on the H100, 2026-12-05).
const std::string kUnreadable =
    "libtorch_cpu.so:0(_ZN3c1012function_refIFvPPcPKlllEE11callback_fnIZN2at18TensorIteratorBase15"
    "loop_2d_from_1dIZNS8_6native4AVX217cpu_serial_kernelIZZZNSB_9templates3cpu12_GLOBAL__N_114"
    "uniform_kernelIPNS8_16CPUGeneratorImplEEEvRS9_ddT_ENKUlvE_clEvENKUlvE0_clEvEUlvE_EEvSK_OSL_)";

analysis::DiagnoseVerdict verdict_with_hottest() {
  analysis::DiagnoseVerdict v;
  v.cpu.emplace();
  v.cpu->samples = 23640;
  v.cpu->hottest_after_startup = true;
  v.cpu->hottest = {{kUnreadable, 1750, 0.44, 0.074}, {"libc.so.6:0(memmove)", 1010, 0.25, 0.043}};
  v.verdict = "no bottleneck";
  return v;
}

TEST(DiagnosisReport, CpuLineCutsAnUnreadableNameAndKeepsTheOthers) {
  const std::string text = render_verdict(verdict_with_hottest(), "t.sqlite", Format::kTable);
  const size_t at = text.find("CPU: 23640 samples; hottest after start-up (self): ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, text.find('\n', at) - at);
  EXPECT_NE(line.find("libtorch_cpu.so:0(_ZN3c1012function_ref"), std::string::npos) << line;
  EXPECT_EQ(line.find("uniform_kernel"), std::string::npos) << line;  // cut before it
  EXPECT_NE(line.find("\u2026 7.4 %, libc.so.6:0(memmove) 4.3 %"), std::string::npos) << line;
}

TEST(DiagnosisReport, JsonKeepsTheWholeName) {
  const auto doc =
      nlohmann::json::parse(render_verdict(verdict_with_hottest(), "t.sqlite", Format::kJson));
  EXPECT_NE(doc.dump().find("uniform_kernel"), std::string::npos);
}

}  // namespace
}  // namespace strata::report
