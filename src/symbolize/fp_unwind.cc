#include "symbolize/fp_unwind.h"

#include <cstring>

namespace strata::symbolize {

UserRegs from_perf_regs(uint64_t sample_regs_user, std::span<const uint64_t> values) {
  // perf's PERF_REG_X86_* number -> DWARF number (-1: not a DWARF register
  // the unwinder uses: flags and segment registers).
  static constexpr int kPerfToDwarf[24] = {
      kRax, kRbx, kRcx, kRdx, kRsi, kRdi, kRbp, kRsp, kRip, -1,   -1,   -1,
      -1,   -1,   -1,   -1,   kR8,  kR9,  kR10, kR11, kR12, kR13, kR14, kR15,
  };
  UserRegs regs;
  size_t next = 0;
  for (int bit = 0; bit < 64 && next < values.size(); ++bit) {
    if (!((sample_regs_user >> bit) & 1)) continue;
    uint64_t value = values[next++];
    if (bit < 24 && kPerfToDwarf[bit] >= 0)
      regs.set(static_cast<DwarfReg>(kPerfToDwarf[bit]), value);
  }
  return regs;
}

std::vector<uint64_t> unwind_fp(const UserRegs& regs, const StackCopy& stack, size_t max_frames) {
  std::vector<uint64_t> pcs;
  if (max_frames == 0 || !regs.has(kRip)) return pcs;
  pcs.push_back(regs.ip());
  if (!regs.has(kRbp)) return pcs;
  uint64_t fp = regs.get(kRbp);
  uint64_t lowest = stack.sp;
  while (pcs.size() < max_frames) {
    if (fp < lowest || fp % 8 != 0 || !stack.contains(fp, 16)) break;
    uint64_t words[2];
    std::memcpy(words, stack.bytes.data() + (fp - stack.sp), sizeof(words));
    uint64_t next_fp = words[0];
    uint64_t ra = words[1];
    if (ra == 0) break;
    pcs.push_back(ra);
    // The caller's frame lies above ours; anything else is a corrupt chain.
    lowest = fp + 16;
    fp = next_fp;
  }
  return pcs;
}

}  // namespace strata::symbolize
