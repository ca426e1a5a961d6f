// Inputs the output-fault tests share: a small real trace of each verb
// (recorded once per test process) and the commands that rewrite them.
#pragma once

#include <string>
#include <vector>

#include "faults/fault_harness.h"

namespace strata::faults {

// A verb whose output file the tests fault: how to run it writing OUTPUT
// (shell-free argv; "OUTPUT" is replaced), and whether this build has it.
struct OutputVerb {
  std::string name;  // cpu, bench, trace, export
  std::vector<std::string> args;  // with the literal "OUTPUT" where the file goes
};

std::vector<OutputVerb> output_verbs();
// The args with OUTPUT replaced and --force added.
std::vector<std::string> args_writing(const OutputVerb& verb, const std::string& output);
// A recorded cpu trace (tests/data), the input of `export`, `report` and `info`.
const fs::path& input_trace();
// A shell command (for sh -c) that plays the CUDA agent on a machine without
// a GPU: it copies a recorded spool (tests/data/spool-gpu_matmul-slow_loop_sync)
// kSpoolCopies times into $STRATA_RUN_DIR, as the agent would have left them,
// then writes its pid to target.pid. strata's ingest then runs for real.
inline constexpr int kSpoolCopies = 40;
std::string spool_target_script();

// False when this build's `strata trace` only says it has no GPU layers.
bool have_trace_verb();

// Checks one failed write: exit 1 and one error line, `old` still holding
// `old_bytes`, no temporaries in its directory. Returns a description of
// every way it differs ("" when none).
std::string failed_write_problems(const Finished& f, const fs::path& old, const std::string& old_bytes);

}  // namespace strata::faults
