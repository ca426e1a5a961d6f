// Where a CPython interpreter's state lives, from its ELF file: the address
// of the `_PyRuntime` global (the root py-spy and the reader in
// sampler/python_stack.h start from) and the version (`Py_Version`, 3.11+,
// else the file's name: python3.9, libpython3.9.so.1.0).
//
// Interpreters export `_PyRuntime` in .dynsym for extension modules (Debian's
// stripped /usr/bin/python3.11 keeps it there), so a stripped file still has
// it; a file without it (a static interpreter stripped of every symbol) is
// named as the problem. py-spy can scan such an interpreter's .bss for the
// runtime's shape; strata does not (yet).
//
// Threading: pure function of the file's bytes, which libelf bounds-checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strata::symbolize {

struct PythonRuntimeSymbol {
  uint64_t address = 0;  // of _PyRuntime in the process; 0 with a problem
  int major = 0;         // 0 when unknown
  int minor = 0;
  std::string problem;  // why the frames cannot be read, for a note; "" when they can
};

// Whether a mapped file's name is a CPython interpreter's or libpython's
// ("python3.11", "libpython3.8.so.1.0"): only those are opened.
bool is_python_module_name(const std::string& path);

// For a mapping of `path` at `start` with file offset `pgoff` in a process:
// nullopt when the file is no CPython (or cannot be read).
std::optional<PythonRuntimeSymbol> find_python_runtime(const std::string& path, uint64_t start,
                                                       uint64_t pgoff);

}  // namespace strata::symbolize
