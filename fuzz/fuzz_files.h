// Inputs that a reader takes only as a file (SQLite, the spool readers that
// take paths): the fuzz entry points write each input into one private
// directory per process (mkdtemp under $TMPDIR), removed at exit, and reuse
// the same names for every input, so a long fuzzing run leaves nothing behind.
//
// Threading: one thread (libFuzzer calls the entry point from one thread per
// process). Errors: a directory or file that cannot be made aborts, since a
// fuzzer that silently tests nothing is worse than one that stops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::fuzz {

// The private directory of this process, made on first use.
const std::string& scratch_dir();

// Writes `size` bytes to scratch_dir()/name (replacing it) and returns the path.
std::string write_input(const std::string& name, const uint8_t* data, size_t size);

}  // namespace strata::fuzz
