#include "faults/output_fixtures.h"

#include <algorithm>

#include "util/temp_dir.h"

namespace strata::faults {

std::vector<OutputVerb> output_verbs() {
  const std::string spin = spin_target_bin();
  return {
      {"cpu", {"cpu", "-F", "250", "-o", "OUTPUT", "--", spin, "--ms", "100"}},
      {"bench", {"bench", "-n", "2", "--warmup", "0", "-q", "-o", "OUTPUT", "--", "true"}},
      {"trace", {"trace", "-o", "OUTPUT", "--", "sh", "-c", spool_target_script()}},
      {"export", {"export", input_trace().string(), "--format", "speedscope", "-o", "OUTPUT"}},
  };
}

std::vector<std::string> args_writing(const OutputVerb& verb, const std::string& output) {
  std::vector<std::string> args = verb.args;
  std::replace(args.begin(), args.end(), std::string("OUTPUT"), output);
  args.insert(args.begin() + 1, "--force");
  return args;
}

std::string spool_target_script() {
  return "i=0; while [ $i -lt " + std::to_string(kSpoolCopies) + " ]; do cp '" +
         test_data("spool-gpu_matmul-slow_loop_sync/spool-1688.bin") +
         "' \"$STRATA_RUN_DIR/spool-$$-$i.bin\"; i=$((i+1)); done; echo $$ > target.pid";
}

const fs::path& input_trace() {
  // A recorded CPU profile whose exports span several pages (17 KiB of
  // speedscope): a full file system cannot take them in a freed page.
  static const fs::path path = test_data("cpu-cpu_hotspot-slow/trace.sqlite");
  return path;
}

bool have_trace_verb() {
  static const bool have = [] {
    test_util::TempDir dir("strata-faults");
    Finished f = run({{"trace", "-o", "t.sqlite", "--", "true"}, dir.path()});
    return f.err.find("this build has no GPU layers") == std::string::npos;
  }();
  return have;
}

std::string failed_write_problems(const Finished& f, const fs::path& old,
                                  const std::string& old_bytes) {
  std::string problems;
  if (!f.exited || f.code != 1) problems += "strata: " + f.describe() + ", want exit 1; ";
  auto errors = error_lines(f.err);
  if (errors.size() != 1) {
    problems += std::to_string(errors.size()) + " error lines, want 1; ";
  } else if (!errors[0].starts_with("strata: ")) {
    problems += "the error line does not start with 'strata: '; ";
  } else if (errors[0].find(old.filename().string()) == std::string::npos) {
    problems += "the error line does not name " + old.filename().string() + "; ";
  }
  std::error_code ec;
  if (fs::is_symlink(old, ec) || read_file(old) != old_bytes) {
    problems += "the old " + old.filename().string() + " was changed; ";
  }
  auto temps = strata_temps(old.parent_path());
  if (!temps.empty()) problems += "temporaries left: " + temps.front() + "; ";
  if (!problems.empty()) problems += "stderr:\n" + f.err;
  return problems;
}

}  // namespace strata::faults
