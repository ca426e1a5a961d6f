#include "symbolize/trampoline.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "symbolize/fp_unwind.h"

namespace strata::symbolize {
namespace {

constexpr uint64_t kSp = 0x7ffd00001000;
constexpr uint64_t kCode = 0x7f0000002000;

// A synthetic stack: word address -> value.
struct FakeStack {
  std::map<uint64_t, uint64_t> words;
  ReadWord reader() const {
    return [this](uint64_t addr, uint64_t* value) {
      auto it = words.find(addr);
      if (it == words.end()) return false;
      *value = it->second;
      return true;
    };
  }
};

UserRegs regs_at(uint64_t pc) {
  UserRegs r;
  r.set(kRip, pc);
  r.set(kRsp, kSp);
  r.set(kRbp, 0x1111);
  r.set(kRbx, 0x2222);
  r.set(kR12, 0x3333);
  r.set(kRax, 0x4444);
  return r;
}

TEST(Trampoline, KindFromNameAndSize) {
  EXPECT_EQ(trampoline_kind({kCode, 11, "py::f:x.py"}), TrampolineKind::kSubRsp);
  EXPECT_EQ(trampoline_kind({kCode, 15, "py::f:x.py"}), TrampolineKind::kSubRsp);
  EXPECT_EQ(trampoline_kind({kCode, 8, "py::f:x.py"}), TrampolineKind::kPushRbp);
  EXPECT_EQ(trampoline_kind({kCode, 12, "py::f:x.py"}), TrampolineKind::kPushRbp);
  EXPECT_EQ(trampoline_kind({kCode, 16, "py::f:x.py"}), TrampolineKind::kNone);
  EXPECT_EQ(trampoline_kind({kCode, 11, "LazyCompile:*f"}), TrampolineKind::kNone);
}

TEST(Trampoline, CallerFrameOfSubRspVariants) {
  for (uint64_t size : {11u, 15u}) {
    SCOPED_TRACE(size);
    PerfMapEntry entry{kCode, size, "py::f:x.py"};
    FakeStack stack;
    stack.words[kSp] = 0xaaaa;          // the trampoline's alignment slot
    stack.words[kSp + 8] = 0x55550000;  // return address into the caller
    // As a caller frame the pc is the return address after `call *%rcx`.
    std::optional<UserRegs> caller =
        trampoline_step(entry, regs_at(kCode + size - 5), false, stack.reader());
    ASSERT_TRUE(caller);
    EXPECT_EQ(caller->ip(), 0x55550000u);
    EXPECT_EQ(caller->sp(), kSp + 16);
    EXPECT_EQ(caller->get(kRbp), 0x1111u);  // untouched by this variant
    EXPECT_EQ(caller->get(kRbx), 0x2222u);
    EXPECT_EQ(caller->get(kR12), 0x3333u);
    EXPECT_FALSE(caller->has(kRax));  // caller-saved: dead
    // Any other offset cannot be a return address.
    EXPECT_FALSE(trampoline_step(entry, regs_at(kCode + size - 4), false, stack.reader()));
    EXPECT_FALSE(trampoline_step(entry, regs_at(kCode), false, stack.reader()));
  }
}

TEST(Trampoline, LeafOffsetsOfEndbr64Variant) {
  PerfMapEntry entry{kCode, 15, "py::f:x.py"};
  FakeStack stack;
  stack.words[kSp] = 0x1000a;
  stack.words[kSp + 8] = 0x1000b;
  auto step = [&](uint64_t offset) {
    return trampoline_step(entry, regs_at(kCode + offset), true, stack.reader());
  };
  // endbr64 (0) and sub (4) not yet executed: RA at [rsp].
  ASSERT_TRUE(step(0));
  EXPECT_EQ(step(0)->ip(), 0x1000au);
  EXPECT_EQ(step(0)->sp(), kSp + 8);
  EXPECT_EQ(step(4)->ip(), 0x1000au);
  // At the call (8) and after it (10): RA at [rsp+8].
  EXPECT_EQ(step(8)->ip(), 0x1000bu);
  EXPECT_EQ(step(8)->sp(), kSp + 16);
  EXPECT_EQ(step(10)->ip(), 0x1000bu);
  // At ret (14): rsp is back, RA at [rsp].
  EXPECT_EQ(step(14)->ip(), 0x1000au);
  // Inside an instruction: refused.
  EXPECT_FALSE(step(2));
  EXPECT_FALSE(step(9));
  EXPECT_FALSE(step(15));
}

TEST(Trampoline, FramePointerVariantRestoresRbp) {
  PerfMapEntry entry{kCode, 8, "py::f:x.py"};
  FakeStack stack;
  stack.words[kSp] = 0x7ffd00002000;  // the caller's rbp, pushed
  stack.words[kSp + 8] = 0x55551234;
  std::optional<UserRegs> caller =
      trampoline_step(entry, regs_at(kCode + 6), false, stack.reader());
  ASSERT_TRUE(caller);
  EXPECT_EQ(caller->ip(), 0x55551234u);
  EXPECT_EQ(caller->sp(), kSp + 16);
  EXPECT_EQ(caller->get(kRbp), 0x7ffd00002000u);
  // Leaf before the push: RA at [rsp], rbp untouched.
  std::optional<UserRegs> leaf = trampoline_step(entry, regs_at(kCode), true, stack.reader());
  ASSERT_TRUE(leaf);
  EXPECT_EQ(leaf->ip(), 0x7ffd00002000u);
  EXPECT_EQ(leaf->get(kRbp), 0x1111u);
}

TEST(Trampoline, UnreadableStackFails) {
  PerfMapEntry entry{kCode, 11, "py::f:x.py"};
  FakeStack empty;
  EXPECT_FALSE(trampoline_step(entry, regs_at(kCode + 6), false, empty.reader()));
  UserRegs no_sp;
  no_sp.set(kRip, kCode + 6);
  EXPECT_FALSE(trampoline_step(entry, no_sp, false, empty.reader()));
}

TEST(FramePointer, WalksAGuardedChain) {
  // Frames at sp+0x20 -> sp+0x60 -> sp+0xa0 -> 0 (end).
  std::vector<uint8_t> bytes(0x100);
  auto put = [&](uint64_t off, uint64_t v) { std::memcpy(bytes.data() + off, &v, 8); };
  put(0x20, kSp + 0x60);
  put(0x28, 0x401001);
  put(0x60, kSp + 0xa0);
  put(0x68, 0x401002);
  put(0xa0, kSp + 0x10);  // points backwards: corrupt, the walk stops
  put(0xa8, 0x401003);
  UserRegs regs;
  regs.set(kRip, 0x401000);
  regs.set(kRsp, kSp);
  regs.set(kRbp, kSp + 0x20);
  StackCopy stack{kSp, bytes};
  std::vector<uint64_t> pcs = unwind_fp(regs, stack, 64);
  EXPECT_EQ(pcs, (std::vector<uint64_t>{0x401000, 0x401001, 0x401002, 0x401003}));
  EXPECT_EQ(unwind_fp(regs, stack, 2).size(), 2u);
  regs.set(kRbp, kSp + 0xf8);  // a frame that would extend past the copy
  EXPECT_EQ(unwind_fp(regs, stack, 64).size(), 1u);
  regs.set(kRbp, 3);
  EXPECT_EQ(unwind_fp(regs, stack, 64).size(), 1u);
}

TEST(PerfRegs, MapsPerfNumberingToDwarf) {
  // ip(8), sp(7), bp(6), bx(1), r12..r15 (20..23) in ascending bit order.
  uint64_t mask = (1u << 1) | (1u << 6) | (1u << 7) | (1u << 8) | (0xfull << 20);
  std::vector<uint64_t> values = {0xb, 0xbb, 0x5b, 0x1b, 12, 13, 14, 15};
  UserRegs regs = from_perf_regs(mask, values);
  EXPECT_EQ(regs.get(kRbx), 0xbu);
  EXPECT_EQ(regs.get(kRbp), 0xbbu);
  EXPECT_EQ(regs.sp(), 0x5bu);
  EXPECT_EQ(regs.ip(), 0x1bu);
  EXPECT_EQ(regs.get(kR12), 12u);
  EXPECT_EQ(regs.get(kR15), 15u);
  EXPECT_FALSE(regs.has(kRax));
  // Fewer values than bits: the rest stay invalid.
  UserRegs partial = from_perf_regs(mask, std::span<const uint64_t>(values).first(2));
  EXPECT_TRUE(partial.has(kRbp));
  EXPECT_FALSE(partial.has(kRsp));
}

}  // namespace
}  // namespace strata::symbolize
