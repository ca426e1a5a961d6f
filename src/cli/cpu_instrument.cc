#include "cli/cpu_instrument.h"

#include <cstdlib>
#include <optional>

#include "common/private_dir.h"
#include "format/instrument_payloads.h"
#include "import/spool_files.h"

namespace strata::cli {

Result<InstrumentedRun> run_instrumented(const std::vector<std::string>& argv,
                                         const InstrumentOptions& options) {
  if (argv.empty()) return make_error("no command to run");
  const std::string parent = options.temp_parent.empty() ? temp_parent() : options.temp_parent;
  auto dir = PrivateDir::make("strata-instrument", parent);  // 0700: spools hold command lines
  if (!dir) {
    return make_error("cannot create a directory in " + parent + ": " + dir.error().message);
  }

  // The child inherits strata's environment; the variable is strata's own
  // for the duration of the run and restored afterwards.
  const char* previous = std::getenv(format::kInstrumentDirEnv);
  std::optional<std::string> saved = previous ? std::optional<std::string>(previous) : std::nullopt;
  setenv(format::kInstrumentDirEnv, dir->path().c_str(), 1);
  ProcessOptions po;
  po.output = options.output;
  auto result = run_process(argv, po);
  if (saved) {
    setenv(format::kInstrumentDirEnv, saved->c_str(), 1);
  } else {
    unsetenv(format::kInstrumentDirEnv);
  }

  import::InstrumentedProfile data;
  if (result) {
    data = import::read_instrument_spools(
        import::list_spools(dir->path(), import::kInstrumentSpoolPrefix));
  }
  if (!result) return result.error();

  if (data.counters.events == 0) {
    return make_error(argv[0] + std::string(kNoInstrumentationEvents) +
                      ": build it with -finstrument-functions and link strata::instrument");
  }
  data.profile.instrument_overhead_ns_per_call = data.overhead_ns_per_call;
  data.profile.wall_ns = result->wall_ns;
  data.profile.cpu_ns = result->user_ns + result->sys_ns;
  return InstrumentedRun{std::move(data), *result};
}

}  // namespace strata::cli
