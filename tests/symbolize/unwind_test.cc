// In-process, end-to-end: capture this process's registers and stack inside
// known call chains (chain.cc, -O2 without frame pointers, PIE), then unwind
// the copy offline with libdwfl and symbolize the pcs.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "chain.h"
#include "symbolize/elf_file.h"
#include "symbolize/fp_unwind.h"
#include "symbolize/symbolizer.h"
#include "test_util.h"

namespace strata::symbolize {
namespace {

using testing::chain_a;
using testing::last_capture;
using testing::marker_line;

struct FlatFrame {
  Frame frame;
  size_t pc_index;
};

std::vector<FlatFrame> flatten(Symbolizer& sym, const AddressSpace& space,
                               const std::vector<uint64_t>& pcs) {
  std::vector<FlatFrame> out;
  auto stack = sym.symbolize_stack(space, pcs);
  for (size_t i = 0; i < stack.size(); ++i) {
    for (Frame& f : stack[i]) out.push_back(FlatFrame{std::move(f), i});
  }
  return out;
}

std::string describe(const std::vector<FlatFrame>& frames) {
  std::string out;
  for (const FlatFrame& f : frames) {
    out += "  #" + std::to_string(f.pc_index) + (f.frame.inlined ? " (inlined) " : " ") +
           f.frame.function + " at " + f.frame.file + ":" + std::to_string(f.frame.line) + " [" +
           f.frame.module + "]\n";
  }
  return out;
}

// Index of the first frame at or after `from` whose function starts with
// `name` (demangled names carry "(int)" and namespaces).
size_t find_frame(const std::vector<FlatFrame>& frames, const std::string& name, size_t from = 0) {
  for (size_t i = from; i < frames.size(); ++i) {
    const std::string& f = frames[i].frame.function;
    if (f == name || f.rfind(name + "(", 0) == 0 ||
        f.find("::" + name + "(") != std::string::npos) {
      return i;
    }
  }
  return frames.size();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void expect_line(const FlatFrame& f, const char* marker) {
  int want = marker_line(STRATA_CHAIN_SOURCE, marker);
  ASSERT_GT(want, 0) << marker;
  EXPECT_TRUE(ends_with(f.frame.file, "chain.cc")) << f.frame.file;
  EXPECT_LE(std::abs(f.frame.line - want), 2)
      << f.frame.function << " at line " << f.frame.line << ", marker " << marker << " at " << want;
}

TEST(Unwind, ChainWithoutFramePointersThroughInlinedFunction) {
  Result<AddressSpace> space = read_proc_maps(0);
  ASSERT_TRUE(space.ok()) << space.error().message;
  chain_a(4);
  testing::Captured cap = last_capture();
  Symbolizer sym;
  UnwindResult u = sym.unwind(*space, cap.regs, cap.view(), 128);
  std::vector<FlatFrame> frames = flatten(sym, *space, u.pcs);
  SCOPED_TRACE("stop " + std::string(unwind_stop_name(u.stop)) + " " + u.error + "\n" +
               describe(frames));
  size_t c = find_frame(frames, "strata::symbolize::testing::(anonymous namespace)::chain_c");
  if (c == frames.size()) c = find_frame(frames, "chain_c");
  ASSERT_LT(c, frames.size());
  EXPECT_EQ(frames[c].pc_index, 0u);
  expect_line(frames[c], "c_capture");
  // chain_c's return address lies in the inlined helper, inside chain_b.
  ASSERT_LT(c + 2, frames.size());
  EXPECT_TRUE(frames[c + 1].frame.inlined);
  EXPECT_NE(frames[c + 1].frame.function.find("chain_b_helper"), std::string::npos);
  expect_line(frames[c + 1], "helper_calls_c");
  EXPECT_FALSE(frames[c + 2].frame.inlined);
  EXPECT_NE(frames[c + 2].frame.function.find("chain_b("), std::string::npos);
  expect_line(frames[c + 2], "b_calls_helper");
  EXPECT_EQ(frames[c + 1].pc_index, frames[c + 2].pc_index);
  size_t a = find_frame(frames, "strata::symbolize::testing::chain_a", c + 3);
  ASSERT_EQ(a, c + 3);
  expect_line(frames[a], "a_calls_b");
  size_t m = find_frame(frames, "main", a + 1);
  ASSERT_LT(m, frames.size());
  EXPECT_EQ(u.stop, UnwindStop::kEnd);
  // The executable is PIE (ET_DYN): its module offsets are not its addresses.
  auto exe = ElfFile::open(frames[c].frame.module);
  ASSERT_TRUE(exe.ok());
  EXPECT_FALSE(exe.value()->is_exec());
  EXPECT_NE(frames[c].frame.module_offset, u.pcs[0]);
}

TEST(Unwind, ThroughLibcQsortBackToMain) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan's qsort interceptor sorts by itself: the callback is called from
  // libasan, with no libc frame to unwind through.
  GTEST_SKIP() << "no libc qsort frame under ASan";
#endif
  Result<AddressSpace> space = read_proc_maps(0);
  ASSERT_TRUE(space.ok());
  testing::sort_and_capture();
  testing::Captured cap = last_capture();
  Symbolizer sym;
  UnwindResult u = sym.unwind(*space, cap.regs, cap.view(), 128);
  std::vector<FlatFrame> frames = flatten(sym, *space, u.pcs);
  SCOPED_TRACE("stop " + std::string(unwind_stop_name(u.stop)) + " " + u.error + "\n" +
               describe(frames));
  size_t cmp = 0;
  while (cmp < frames.size() &&
         frames[cmp].frame.function.find("compare_and_capture") == std::string::npos) {
    ++cmp;
  }
  ASSERT_LT(cmp, frames.size());
  expect_line(frames[cmp], "compare_capture");
  size_t libc = cmp + 1;
  ASSERT_LT(libc, frames.size());
  EXPECT_NE(frames[libc].frame.module.find("libc.so"), std::string::npos);
  size_t sorter = find_frame(frames, "strata::symbolize::testing::sort_and_capture", libc);
  ASSERT_LT(sorter, frames.size());
  for (size_t i = libc; i < sorter; ++i) {
    EXPECT_NE(frames[i].frame.module.find("libc.so"), std::string::npos) << i;
  }
  expect_line(frames[sorter], "qsort");
  EXPECT_LT(find_frame(frames, "main", sorter), frames.size());
}

// The x86-64 trampoline of CPython 3.12 (Python/asm_trampoline.S), without
// and with endbr64: sub $8,%rsp; call *%rcx; add $8,%rsp; ret.
const uint8_t kTrampoline[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
const uint8_t kTrampolineCet[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08,
                                  0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3};
// CPython 3.14's frame-pointer variant: push %rbp; mov %rsp,%rbp; call *%rcx;
// pop %rbp; ret.
const uint8_t kTrampolineFp[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3};

// ra_offset: where the return address after `call *%rcx` lies in the code.
void check_trampoline(const uint8_t* code, size_t size, uint64_t ra_offset) {
  uint64_t at = testing::call_through_trampoline(code, size);
  if (at == 0) GTEST_SKIP() << "anonymous executable memory refused here";
  testing::Captured cap = last_capture();
  Result<AddressSpace> space = read_proc_maps(0);
  ASSERT_TRUE(space.ok());
  char line[128];
  std::snprintf(line, sizeof(line), "%llx %zx py::evaluate:/tmp/example.py\n",
                static_cast<unsigned long long>(at), size);
  space->perf_map = PerfMap::parse(line);

  Symbolizer sym;
  UnwindResult u = sym.unwind(*space, cap.regs, cap.view(), 128);
  std::vector<FlatFrame> frames = flatten(sym, *space, u.pcs);
  SCOPED_TRACE("stop " + std::string(unwind_stop_name(u.stop)) + " " + u.error + "\n" +
               describe(frames));
  EXPECT_EQ(u.trampoline_steps, 1);
  ASSERT_GE(frames.size(), 3u);
  EXPECT_NE(frames[0].frame.function.find("trampoline_callee"), std::string::npos);
  EXPECT_EQ(frames[1].frame.function, "py::evaluate:/tmp/example.py");
  EXPECT_EQ(u.pcs[1] - at, ra_offset);
  size_t caller = find_frame(frames, "strata::symbolize::testing::call_through_trampoline");
  ASSERT_EQ(caller, 2u);
  expect_line(frames[caller], "call_tramp");
  EXPECT_LT(find_frame(frames, "main", caller), frames.size());
  EXPECT_EQ(u.stop, UnwindStop::kEnd);

  // Without the perf map the trampoline is unknown code: the walk ends or
  // goes astray there, bounded, and nothing is stepped over.
  space->perf_map = PerfMap();
  UnwindResult plain = sym.unwind(*space, cap.regs, cap.view(), 128);
  EXPECT_EQ(plain.trampoline_steps, 0);
  EXPECT_GE(plain.pcs.size(), 2u);
  EXPECT_LE(plain.pcs.size(), 128u);
}

TEST(Unwind, ThroughCpythonPerfTrampoline) {
  check_trampoline(kTrampoline, sizeof(kTrampoline), 6);
}
TEST(Unwind, ThroughCpythonPerfTrampolineWithEndbr64) {
  check_trampoline(kTrampolineCet, sizeof(kTrampolineCet), 10);
}
TEST(Unwind, ThroughCpython314FramePointerTrampoline) {
  check_trampoline(kTrampolineFp, sizeof(kTrampolineFp), 6);
}

TEST(Unwind, TruncatedStackCopyIsReported) {
  Result<AddressSpace> space = read_proc_maps(0);
  ASSERT_TRUE(space.ok());
  chain_a(2);
  testing::Captured cap = last_capture();
  // Keep only the innermost 64 bytes: the unwind must stop, flagged.
  StackCopy small{cap.regs.sp(), std::span<const uint8_t>(cap.stack).first(64)};
  Symbolizer sym;
  UnwindResult u = sym.unwind(*space, cap.regs, small, 128);
  EXPECT_GE(u.pcs.size(), 1u);
  EXPECT_LT(u.pcs.size(), 6u);
  EXPECT_EQ(u.stop, UnwindStop::kStackTruncated) << u.error;
}

TEST(Unwind, MaxFramesAndEmptyInputs) {
  Result<AddressSpace> space = read_proc_maps(0);
  ASSERT_TRUE(space.ok());
  chain_a(2);
  testing::Captured cap = last_capture();
  Symbolizer sym;
  UnwindResult u = sym.unwind(*space, cap.regs, cap.view(), 3);
  EXPECT_EQ(u.pcs.size(), 3u);
  EXPECT_EQ(u.stop, UnwindStop::kMaxFrames);
  EXPECT_TRUE(sym.unwind(*space, cap.regs, cap.view(), 0).pcs.empty());
  // No mappings at all: the ip alone, never a crash.
  AddressSpace empty;
  UnwindResult none = sym.unwind(empty, cap.regs, cap.view(), 16);
  ASSERT_EQ(none.pcs.size(), 1u);
  EXPECT_EQ(none.stop, UnwindStop::kNoUnwindInfo);
  std::vector<Frame> f = sym.symbolize(empty, 0x1234, false);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].function, "0x1234");
  // Garbage registers: bounded, no crash.
  UserRegs junk;
  junk.set(kRip, 0xdeadbeef);
  junk.set(kRsp, cap.regs.sp());
  junk.set(kRbp, 0x42);
  UnwindResult j = sym.unwind(*space, junk, cap.view(), 16);
  EXPECT_GE(j.pcs.size(), 1u);
  EXPECT_LE(j.pcs.size(), 16u);
}

TEST(Unwind, OneDwflPerAddressSpaceIsReused) {
  Result<AddressSpace> space = read_proc_maps(0);
  ASSERT_TRUE(space.ok());
  chain_a(2);
  testing::Captured cap = last_capture();
  Symbolizer sym;
  for (int i = 0; i < 50; ++i) {
    UnwindResult u = sym.unwind(*space, cap.regs, cap.view(), 64);
    sym.symbolize_stack(*space, u.pcs);
  }
  EXPECT_EQ(sym.stats().dwfl_sessions, 1u);
  EXPECT_EQ(sym.stats().unwinds, 50u);
  EXPECT_GT(sym.stats().symbol_cache_hits, sym.stats().symbol_cache_misses);
}

TEST(Symbolize, VdsoFromThisProcessImage) {
  Result<AddressSpace> space = read_proc_maps(0);
  ASSERT_TRUE(space.ok());
  auto vdso = std::find_if(space->mappings.begin(), space->mappings.end(),
                           [](const Mapping& m) { return m.path == "[vdso]"; });
  if (vdso == space->mappings.end()) GTEST_SKIP() << "no vDSO mapped";
  Symbolizer sym;
  bool found = false;
  for (uint64_t pc = vdso->start; pc < vdso->end && !found; pc += 4) {
    std::vector<Frame> frames = sym.symbolize(*space, pc, false);
    ASSERT_FALSE(frames.empty());
    found = frames.back().has_symbol && frames.back().function.find("gettime") != std::string::npos;
  }
  EXPECT_TRUE(found);
}

TEST(Unwind, FramePointerWalkIsGuardedOnCodeWithoutFramePointers) {
  chain_a(2);
  testing::Captured cap = last_capture();
  // rbp is a general register here: the walk must stay inside the copy.
  std::vector<uint64_t> pcs = unwind_fp(cap.regs, cap.view(), 64);
  ASSERT_GE(pcs.size(), 1u);
  EXPECT_EQ(pcs[0], cap.regs.ip());
  EXPECT_LE(pcs.size(), 64u);
}

}  // namespace
}  // namespace strata::symbolize

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
