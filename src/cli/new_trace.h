// What every recording verb does first: pick the trace file (-o, with nsys's
// %q{VAR}, %p, %h and %% expanded, or the first free STEM<N>.sqlite, taken
// when the trace is committed), check that it can be written and create its
// temporary file, start the run's metadata, and record which rank of a
// distributed job this is (strata_ranks: launcher variables and a clock pair).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"
#include "store/rank_rows.h"
#include "store/trace_db.h"

namespace strata::cli {

struct NewTrace {
  store::TraceWriter writer;
  store::RunInfo info;  // verb, command, directory, host, strata version and start time
  store::RankRow rank;  // already written into the trace

  // The trace's file: after the commit the name it took, which for a default
  // name may differ from the one free at the start (parallel runs).
  const std::string& path() const { return writer.path(); }
};

// On failure prints the one-line error and returns the verb's exit status
// instead: 2 (usage) for the output name (unknown specifier, unset variable,
// a directory, a missing or unwritable directory, a taken name without
// --force), 1 when the file could be made but not written (a full disk).
std::variant<NewTrace, int> start_trace(const std::optional<std::string>& output, bool force,
                                        const std::string& stem, const std::string& verb,
                                        const std::vector<std::string>& command);

// What every recording verb does last: the run's metadata, then what
// write_rest writes, in the trace's one transaction, committed. The first
// error stops it (nothing is committed then).
Status write_run_and_commit(NewTrace& trace, const std::function<Status()>& write_rest);

// A failed write with the trace's name in front where the message lacks it
// (SQLite's errors name only the table: "CUPTI_ACTIVITY_KIND_RUNTIME: disk
// I/O error"), so that the user learns which file was not written.
Status with_trace_named(const NewTrace& trace, Status status);

// "cannot start 'CMD': REASON" when argv[0] would not start (not found in
// PATH, not executable), as execvp would decide; nullopt when it would. For
// commands run later in a verb (bench --vs), checked before anything runs.
std::optional<std::string> command_start_problem(const std::vector<std::string>& argv);

}  // namespace strata::cli
