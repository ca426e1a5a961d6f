// cProfile's names for the C functions Python code calls ("built-in method
// builtins.sorted", "method 'join' of 'str' objects"), read from the
// PyMethodDef tables of an ELF file: the interpreter, libpython, or an
// extension module such as math.cpython-312-x86_64-linux-gnu.so.
//
// A C function reaches Python through a PyMethodDef {ml_name, ml_meth,
// ml_flags, ml_doc}, in a NULL-terminated array that a module definition
// (PyModuleDef.m_methods), a static type (PyTypeObject.tp_methods) or a type
// spec (the Py_tp_methods slot of PyType_Spec) points at. Those structs are
// initialized data, so the file alone says which C function is which
// builtin, without running the interpreter. Their layout is the same on
// CPython 3.8 to 3.13 (x86-64, default build):
//
//   PyModuleDef   +40 m_name        +64 m_methods   (+8..+39: zero in the file)
//   PyTypeObject  +24 tp_name       +32 tp_basicsize +232 tp_methods
//   PyType_Spec   +0  name          +24 slots: {int slot; void* pfunc} ..., 0
//   PyMethodDef   +0  ml_name  +8 ml_meth  +16 ml_flags  (32 bytes each)
//
// Pointers in a position-independent file are relocations, not bytes: the
// scan applies R_X86_64_RELATIVE and R_X86_64_64 first. Every candidate must
// hold up in full (names that are identifiers, every ml_meth the start of a
// function symbol, sane flags), so arbitrary data does not pass as a table.
//
// A stripped interpreter (Ubuntu's and Debian's /usr/bin/python3.x keep only
// .dynsym) has no symbol for a static ml_meth such as builtin_sorted: there
// a function is known by its CFI instead, the function starts that
// .eh_frame_hdr lists, and a sampled address is matched to the function
// whose FDE covers it.
//
// Threading: pure function of the file's bytes. The bytes are untrusted:
// every read is bounds-checked (tests/symbolize/python_methods_test.cc
// mutates real files).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "symbolize/elf_file.h"

namespace strata::symbolize {

// Function symbol name (the linkage name, Frame::raw_function) -> cProfile's
// name without its braces.
using PythonMethodNames = std::unordered_map<std::string, std::string>;

// One file's builtins. Empty for a file that does not use the Python C API
// (no Py* symbol in .dynsym) or is not x86-64 ELF64.
class PythonMethods {
 public:
  // The name of the function with this linkage name; nullptr when none.
  const std::string* by_symbol(const std::string& symbol) const;
  // The name of the function that holds `address` (the file's own address
  // space, Frame::module_offset), found through CFI; for frames without a
  // symbol. nullptr when none.
  const std::string* by_address(uint64_t address) const;

  const PythonMethodNames& symbols() const { return symbols_; }
  size_t size() const { return starts_.size(); }

 private:
  friend PythonMethods read_python_methods(const ElfFile& file);
  PythonMethodNames symbols_;
  std::map<uint64_t, std::string> starts_;          // function start -> name
  std::vector<std::pair<uint64_t, uint64_t>> cfi_;  // [start, end) of each FDE, sorted
};

PythonMethods read_python_methods(const ElfFile& file);

}  // namespace strata::symbolize
