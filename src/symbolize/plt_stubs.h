// The names of a file's PLT stubs, as objdump and perf name them
// ("memcpy@plt"). A call to a function of another library jumps through a
// stub; stubs have no symbol, so a sample taken in one would read
// "libpython3.11.so.1.0+0xf8db0" where perf reads "_Py_EncodeLocaleRaw@plt".
//
// An x86-64 call's stub is 16 bytes, in .plt (after its header, PLT0) or, where
// the file has a second PLT for indirect branch tracking (IBT, CET), in
// .plt.sec; its first instruction (after endbr64) is `jmp *GOT(%rip)`. As
// objdump does, the GOT slot it jumps through names it: the R_X86_64_JUMP_SLOT
// relocation of .rela.plt at that slot binds a .dynsym function there. The
// relocations' order is no guide: the C library's interleaves ifunc slots
// (R_X86_64_IRELATIVE, no symbol: those stubs stay unnamed). A function whose
// address the file also takes is called through .plt.got instead: 8-byte
// stubs (16 with IBT) jumping through a slot that a R_X86_64_GLOB_DAT
// relocation of .rela.dyn binds (libpython's `_PyEval_EvalFrameDefault@plt`).
//
// Threading: pure function of the file. The bytes are untrusted: every read
// stays inside its section's data as libelf gives it;
// tests/symbolize/plt_stubs_test.cc mutates real files.
#pragma once

#include <gelf.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata::symbolize {

// The size of a .plt or .plt.sec stub.
inline constexpr uint64_t kPltStubSize = 16;

struct PltStub {
  uint64_t address = 0;  // the file's own address (st_value's space)
  uint64_t size = 0;     // bytes: kPltStubSize, or 8 in .plt.got
  std::string name;      // "memcpy@plt"
};

// The named stubs, by section and then address. Empty for a file that is
// not x86-64 ELF64 or has no relocations binding a stub's slot.
std::vector<PltStub> plt_stubs(Elf* elf);

}  // namespace strata::symbolize
