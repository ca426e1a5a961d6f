// The instruction sweep's PTX (src/agent/kernels/instruction_sweep_ptx.h):
// its shape, what ptxas makes of it (where this machine has ptxas: the code
// must really be 16 bytes per multiply-add, nothing folded away), and that
// its guarded store never happens. Its effect on a GPU is measured by
// bench/kernels_vs_ncu.py and bench/flush_lab (docs/PERFORMANCE.md,
// "Instruction caches and an empty L2").
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "agent/kernels/instruction_sweep_ptx.h"
#include "util/temp_dir.h"

namespace {

using strata::agent::kernels::instruction_sweep_ptx;
using strata::agent::kernels::kInstructionSweepEntry;
using strata::agent::kernels::kInstructionSweepInstructions;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(KernelsInstructionSweep, IsOneEntryOfTheAskedMultiplyAdds) {
  const std::string ptx = instruction_sweep_ptx();
  EXPECT_EQ(ptx.rfind(".version 7.0\n.target sm_75\n.address_size 64\n", 0), 0u);
  EXPECT_EQ(count_of(ptx, ".entry "), 1u);
  EXPECT_NE(ptx.find(std::string(".entry ") + kInstructionSweepEntry + "(.param .u64 sink)"),
            std::string::npos);
  EXPECT_EQ(count_of(ptx, "\tmad.lo.u32 "), kInstructionSweepInstructions);
  EXPECT_EQ(count_of(instruction_sweep_ptx(8), "\tmad.lo.u32 "), 8u);
  // Four chains, each squared: %r3 = %r3 * %r3 + 7, ..., %r6 ... + 13.
  EXPECT_NE(ptx.find("\tmad.lo.u32 %r3, %r3, %r3, 7;\n\tmad.lo.u32 %r4, %r4, %r4, 9;\n"
                     "\tmad.lo.u32 %r5, %r5, %r5, 11;\n\tmad.lo.u32 %r6, %r6, %r6, 13;\n"),
            std::string::npos);
  EXPECT_EQ(count_of(ptx, "{"), count_of(ptx, "}"));
  EXPECT_EQ(ptx.substr(ptx.size() - 8), "\tret;\n}\n");
}

// The largest SM count the test covers: blocks are 2 per SM, threads 128.
constexpr uint32_t kMaxSms = 1024;

// The kernel's arithmetic on the host: the value the store is guarded by,
// for a thread whose %tid.x + %ctaid.x is `index`.
uint32_t folded_value(uint32_t index) {
  uint32_t chain[4] = {index, index + 1, index + 2, index + 3};
  for (size_t i = 0; i < kInstructionSweepInstructions; ++i) {
    uint32_t& r = chain[i % 4];
    r = r * r + static_cast<uint32_t>(2 * (3 + i % 4) + 1);
  }
  return chain[0] ^ chain[1] ^ chain[2] ^ chain[3];
}

TEST(KernelsInstructionSweep, ItsStoreHappensForNoThreadOfAnyGridUpToAThousandSms) {
  // The sink is the L2 sweep's buffer, which must stay zeros (l2_sweep.cu).
  constexpr uint32_t kMagic = 1540483477u;  // the PTX's setp constant
  ASSERT_NE(instruction_sweep_ptx().find(std::to_string(kMagic)), std::string::npos);
  for (uint32_t index = 0; index < 127 + 2 * kMaxSms; ++index) {
    ASSERT_NE(folded_value(index), kMagic) << "thread index " << index;
  }
}

TEST(KernelsInstructionSweep, PtxasKeepsEveryInstruction) {
  const std::string ptxas = STRATA_PTXAS;
  if (access(ptxas.c_str(), X_OK) != 0) GTEST_SKIP() << "no ptxas at " << ptxas;
  strata::test_util::TempDir dir("strata_isweep");
  const std::string ptx_path = dir.file("sweep.ptx");
  const std::string cubin_path = dir.file("sweep.cubin");
  {
    std::ofstream out(ptx_path);
    out << instruction_sweep_ptx();
  }
  // -O0, as the agent asks of the JIT; sm_90 is the H200's architecture.
  const std::string command =
      ptxas + " -arch=sm_90 -O0 -o " + cubin_path + " " + ptx_path + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  struct stat cubin {};
  ASSERT_EQ(stat(cubin_path.c_str(), &cubin), 0);
  // 16 bytes per instruction: at least the multiply-adds' 256 KB.
  EXPECT_GE(static_cast<size_t>(cubin.st_size), 16 * kInstructionSweepInstructions);
}

}  // namespace
