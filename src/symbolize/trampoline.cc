#include "symbolize/trampoline.h"

#include <string_view>

namespace strata::symbolize {
namespace {

constexpr uint64_t kEndbr64Size = 4;
constexpr uint64_t kSubRspSize = 11;  // sub(4) call(2) add(4) ret(1)
constexpr uint64_t kPushRbpSize = 8;  // push(1) mov(3) call(2) pop(1) ret(1)

// Where the caller's frame is, at a given offset into the trampoline code:
// its return address lives at [rsp + ra_offset]; saved_rbp_offset >= 0 when
// the caller's rbp is saved at [rsp + saved_rbp_offset].
struct Layout {
  uint64_t ra_offset;
  int64_t saved_rbp_offset;
};

std::optional<Layout> layout_at(TrampolineKind kind, uint64_t size, uint64_t offset, bool leaf) {
  // `prefix` is the endbr64, where present; it changes nothing on the stack.
  if (kind == TrampolineKind::kSubRsp) {
    uint64_t prefix = size - kSubRspSize;
    uint64_t call = prefix + 4, after_call = prefix + 6, ret = prefix + 10;
    if (!leaf) {
      if (offset != after_call) return std::nullopt;
      return Layout{8, -1};
    }
    if (offset < call) {
      if (offset != 0 && offset != prefix) return std::nullopt;
      return Layout{0, -1};  // before sub $8: rsp points at the return address
    }
    if (offset == call || offset == after_call) return Layout{8, -1};
    if (offset == ret) return Layout{0, -1};
    return std::nullopt;
  }
  if (kind == TrampolineKind::kPushRbp) {
    uint64_t prefix = size - kPushRbpSize;
    uint64_t mov = prefix + 1, call = prefix + 4, after_call = prefix + 6, ret = prefix + 7;
    if (!leaf) {
      if (offset != after_call) return std::nullopt;
      return Layout{8, 0};
    }
    if (offset == 0 || offset == prefix) return Layout{0, -1};  // before push
    if (offset == mov || offset == call || offset == after_call) return Layout{8, 0};
    if (offset == ret) return Layout{0, -1};  // rbp already popped
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

TrampolineKind trampoline_kind(const PerfMapEntry& entry) {
  if (std::string_view(entry.name).substr(0, 4) != "py::") return TrampolineKind::kNone;
  if (entry.size == kSubRspSize || entry.size == kSubRspSize + kEndbr64Size) {
    return TrampolineKind::kSubRsp;
  }
  if (entry.size == kPushRbpSize || entry.size == kPushRbpSize + kEndbr64Size) {
    return TrampolineKind::kPushRbp;
  }
  return TrampolineKind::kNone;
}

std::optional<UserRegs> trampoline_step(const PerfMapEntry& entry, const UserRegs& regs, bool leaf,
                                        const ReadWord& read) {
  TrampolineKind kind = trampoline_kind(entry);
  if (kind == TrampolineKind::kNone || !regs.has(kRip) || !regs.has(kRsp)) return std::nullopt;
  uint64_t pc = regs.ip();
  if (pc < entry.start || pc - entry.start >= entry.size) return std::nullopt;
  std::optional<Layout> layout = layout_at(kind, entry.size, pc - entry.start, leaf);
  if (!layout) return std::nullopt;
  uint64_t sp = regs.sp();
  uint64_t ra = 0;
  if (!read(sp + layout->ra_offset, &ra)) return std::nullopt;
  UserRegs caller = regs;
  caller.set(kRip, ra);
  caller.set(kRsp, sp + layout->ra_offset + 8);
  if (layout->saved_rbp_offset >= 0) {
    uint64_t rbp = 0;
    if (!read(sp + static_cast<uint64_t>(layout->saved_rbp_offset), &rbp)) return std::nullopt;
    caller.set(kRbp, rbp);
  }
  // Caller-saved registers are dead across the call the caller made.
  for (DwarfReg reg : {kRax, kRdx, kRcx, kRsi, kRdi, kR8, kR9, kR10, kR11}) {
    caller.valid &= ~(1u << reg);
  }
  return caller;
}

}  // namespace strata::symbolize
