// Helpers shared by the symbolize tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "symbolize/types.h"

namespace strata::symbolize::testing {

// The 1-based line of `path` that contains "MARK:<name>" followed by a
// non-identifier character or the end of the line; 0 when none does.
int marker_line(const std::string& path, const std::string& name);

// Mappings of an ELF file as the dynamic loader would create them at
// `base` (one per PT_LOAD, page-aligned), for offline symbolization of a
// file that is not loaded.
std::vector<Mapping> mappings_for_file(const std::string& path, uint64_t base);

// The st_value of a symbol in the file's .symtab; 0 when absent.
uint64_t symbol_value(const std::string& path, const std::string& name);

struct FunctionSymbol {
  std::string name;  // as in the file (mangled)
  uint64_t value = 0;
  uint64_t size = 0;
};

// The STT_FUNC entries of the file's .symtab.
std::vector<FunctionSymbol> function_symbols(const std::string& path);

// The path of the C library this process loaded; "" when none is found.
std::string libc_path();

// Runs a shell command; true when it exits 0.
bool run_command(const std::string& command);

}  // namespace strata::symbolize::testing
