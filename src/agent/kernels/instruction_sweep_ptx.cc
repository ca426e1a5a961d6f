#include "agent/kernels/instruction_sweep_ptx.h"

namespace strata::agent::kernels {

namespace {

// Four independent chains (%r3..%r6), so that the warp issues one
// instruction per cycle rather than waiting on each result: the sweep is
// paid before every pass.
constexpr int kChains = 4;

}  // namespace

std::string instruction_sweep_ptx(size_t instructions) {
  std::string ptx;
  ptx.reserve(1024 + instructions * 32);
  ptx +=
      ".version 7.0\n"
      ".target sm_75\n"
      ".address_size 64\n"
      "\n"
      ".visible .entry strata_instruction_sweep(.param .u64 sink)\n"
      "{\n"
      "\t.reg .pred %p<2>;\n"
      "\t.reg .b32 %r<8>;\n"
      "\t.reg .b64 %rd<3>;\n"
      "\tmov.u32 %r1, %tid.x;\n"
      "\tmov.u32 %r2, %ctaid.x;\n"
      "\tadd.u32 %r3, %r1, %r2;\n"
      "\tadd.u32 %r4, %r3, 1;\n"
      "\tadd.u32 %r5, %r3, 2;\n"
      "\tadd.u32 %r6, %r3, 3;\n";
  for (size_t i = 0; i < instructions; ++i) {
    const int chain = 3 + static_cast<int>(i % kChains);
    const std::string r = "%r" + std::to_string(chain);
    ptx += "\tmad.lo.u32 " + r + ", " + r + ", " + r + ", " + std::to_string(2 * chain + 1) + ";\n";
  }
  ptx +=
      "\txor.b32 %r7, %r3, %r4;\n"
      "\txor.b32 %r7, %r7, %r5;\n"
      "\txor.b32 %r7, %r7, %r6;\n"
      "\tsetp.ne.u32 %p1, %r7, 1540483477;\n"
      "\t@%p1 bra DONE;\n"
      "\tld.param.u64 %rd1, [sink];\n"
      "\tcvta.to.global.u64 %rd2, %rd1;\n"
      "\tst.global.u32 [%rd2], %r7;\n"
      "DONE:\n"
      "\tret;\n"
      "}\n";
  return ptx;
}

}  // namespace strata::agent::kernels
