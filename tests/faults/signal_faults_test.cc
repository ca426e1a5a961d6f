// Signals at seeded random moments during `strata cpu`, `strata bench` and
// `strata trace` (its ingest included): INT, TERM, HUP and QUIT must leave
// the trace committed with what was recorded, no temporary beside it, exit
// 128+N and the target gone; KILL may leave no trace, but never a damaged
// one, its temporary is removed by the next strata run in that directory,
// and the target dies with strata. Private directories under TMPDIR (the
// agent's run directory) are gone too, but for KILL.
//
// Each case runs twice per signal: once while the target runs, once after it
// has exited (strata symbolizing, ingesting, writing or reporting). The delay
// is drawn from the suite's seed (printed; STRATA_FAULTS_SEED=N repeats it).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <string>
#include <thread>

#include "faults/fault_harness.h"
#include "faults/output_fixtures.h"
#include "store/trace_db.h"
#include "util/temp_dir.h"

namespace strata::faults {
namespace {

enum class Verb { kCpu, kBench, kTrace };
enum class Phase { kTargetRunning, kAfterTarget };

struct Case {
  Verb verb;
  int sig;
  Phase phase;
};

std::string verb_name(Verb v) {
  switch (v) {
    case Verb::kCpu: return "cpu";
    case Verb::kBench: return "bench";
    case Verb::kTrace: return "trace";
  }
  return "?";
}

constexpr int kBenchRuns = 3;

// The target: a shell that records its pid (after any setup), then becomes
// the spinning program, so that pid is the target's to the end.
std::string target_script(Verb verb, Phase phase) {
  const bool running = phase == Phase::kTargetRunning;
  std::string spin = "exec '" + spin_target_bin() + "' --ms ";
  switch (verb) {
    case Verb::kCpu:
      return "echo $$ > target.pid; " + spin + (running ? "3000" : "150");
    case Verb::kBench:
      // Runs long enough that one left running by a dead strata is seen.
      return "echo $$ >> target.pids; " + spin + (running ? "700" : "20");
    case Verb::kTrace:
      return spool_target_script() + "; " + spin + (running ? "3000" : "10");
  }
  return "";
}

std::vector<std::string> strata_args(Verb verb, Phase phase) {
  std::vector<std::string> args;
  switch (verb) {
    case Verb::kCpu:
      args = {"cpu", "-F", "250"};
      break;
    case Verb::kBench:
      args = {"bench", "-n", std::to_string(kBenchRuns), "--warmup", "0", "-q"};
      break;
    case Verb::kTrace:
      args = {"trace"};
      break;
  }
  for (std::string a : {"-o", "t.sqlite", "--", "sh", "-c"}) args.push_back(a);
  args.push_back(target_script(verb, phase));
  return args;
}

// The kernels an unsignalled `trace` of the same target stores.
size_t reference_kernel_count() {
  static const size_t count = [] {
    test_util::TempDir dir("strata-faults");
    Finished f = run({strata_args(Verb::kTrace, Phase::kAfterTarget), dir.path()});
    EXPECT_TRUE(f.exited && f.code == 0) << f.describe() << "\n" << f.err;
    auto reader = store::TraceReader::open((dir.path() / "t.sqlite").string());
    if (!reader) return size_t{0};
    auto kernels = reader->kernels();
    return kernels ? kernels->size() : size_t{0};
  }();
  return count;
}

// Waits for the moment the case's delay counts from; returns the target pids
// seen so far (cpu, trace: one; bench: the runs started).
std::vector<pid_t> wait_for_phase(Verb verb, Phase phase, const fs::path& dir) {
  const fs::path pid_file = dir / (verb == Verb::kBench ? "target.pids" : "target.pid");
  auto first = wait_for_pid_file(pid_file, milliseconds(10'000));
  if (!first) return {};
  if (phase == Phase::kTargetRunning) return {*first};
  if (verb == Verb::kBench) {
    // After the last run: every run has written its pid and the last is gone.
    auto deadline = std::chrono::steady_clock::now() + milliseconds(10'000);
    while (read_pids(pid_file).size() < kBenchRuns && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
  auto pids = read_pids(pid_file);
  if (!pids.empty()) gone_within(pids.back(), milliseconds(10'000));
  return pids;
}

// The latest moment a signal is still useful, in ms after the phase starts
// (past it strata has usually finished; the check then holds trivially).
int64_t delay_bound_ms(Verb verb, Phase phase) {
  if (phase == Phase::kTargetRunning) return verb == Verb::kBench ? 1500 : 600;
  switch (verb) {
    case Verb::kCpu: return 250;    // symbolize, write, report
    case Verb::kBench: return 30;   // write the runs, report
    case Verb::kTrace: return 250;  // ingest the spools, write, report
  }
  return 100;
}

// For gtest's and ctest's names of the cases.
void PrintTo(const Case& c, std::ostream* os) {
  *os << verb_name(c.verb) << " SIG" << sigabbrev_np(c.sig)
      << (c.phase == Phase::kTargetRunning ? " while the target runs" : " after the target");
}

class SignalFaults : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { become_subreaper(); }
};

TEST_P(SignalFaults, RecordedDataSurvivesAndNothingIsLeft) {
  const Case c = GetParam();
  if (c.verb == Verb::kTrace && !have_trace_verb()) GTEST_SKIP() << "built without CUDA";
  const size_t want_kernels = c.verb == Verb::kTrace ? reference_kernel_count() : 0;

  test_util::TempDir dir("strata-faults");
  const int64_t delay = uniform_ms(0, delay_bound_ms(c.verb, c.phase));
  const std::string where = "seed " + std::to_string(seed()) + ", signal " +
                            std::to_string(c.sig) + " " + std::to_string(delay) + " ms into the " +
                            (c.phase == Phase::kTargetRunning ? "target's run" : "work after it");
  SCOPED_TRACE(where);
  std::printf("faults: %s\n", where.c_str());

  // strata's private directories (the agent's run directory) go here, to be
  // seen gone afterwards.
  test_util::TempDir tmp("strata-faults-tmpdir");
  Launch launch{strata_args(c.verb, c.phase), dir.path()};
  launch.env["TMPDIR"] = tmp.path().string();
  Strata strata = Strata::start(launch);
  std::vector<pid_t> targets = wait_for_phase(c.verb, c.phase, dir.path());
  ASSERT_FALSE(targets.empty()) << "the target never started";
  std::this_thread::sleep_for(milliseconds(delay));
  bool sent = strata.signal(c.sig);
  Finished f = strata.wait();
  // kill() also succeeds on a process already inside exit_group, which is
  // not yet a zombie: the kernel drops the signal and the status stays 0.
  // Any earlier signal either reaches a forwarder (exit 128+N, main.cc) or,
  // with none left, the default action (death by the signal), so a clean
  // exit 0 here means the signal lost that race.
  if (sent && f.exited && f.code == 0) sent = false;
  if (!sent) std::printf("faults: strata had finished before the signal: an ordinary run\n");

  // The target dies with strata (or from the forwarded signal).
  const fs::path pid_file = dir.path() / (c.verb == Verb::kBench ? "target.pids" : "target.pid");
  EXPECT_EQ(survivors(read_pids(pid_file), milliseconds(400)), std::vector<pid_t>{})
      << "targets still running after strata ended (" << f.describe() << ")";

  const fs::path trace = dir.path() / "t.sqlite";
  const bool killed = sent && c.sig == SIGKILL;
  if (!killed) {
    const int want = sent ? 128 + c.sig : 0;
    EXPECT_TRUE(f.exited && f.code == want)
        << "strata: " << f.describe() << ", want exit " << want << "\n" << f.err;
    EXPECT_TRUE(fs::exists(trace)) << "no trace at the final name; stderr:\n" << f.err;
    EXPECT_EQ(strata_temps(dir.path()), std::vector<std::string>{}) << "temporaries left";
    EXPECT_TRUE(fs::is_empty(tmp.path())) << "a private directory was left in TMPDIR";
  }
  if (fs::exists(trace)) {
    // Whatever is at the final name is a whole trace that strata reads.
    auto reader = store::TraceReader::open(trace.string());
    ASSERT_TRUE(reader) << "half-written trace at the final name: " << reader.error().message;
    auto info = reader->run();
    ASSERT_TRUE(info) << "the trace has no run row";
    EXPECT_EQ(info->verb, verb_name(c.verb));
    if (c.verb == Verb::kTrace) {
      auto kernels = reader->kernels();
      ASSERT_TRUE(kernels);
      EXPECT_EQ(kernels->size(), want_kernels) << "kernels recorded in the spools were lost";
    }
    if (c.verb == Verb::kBench) {
      auto runs = reader->bench_runs();
      ASSERT_TRUE(runs);
      // Every started run but the one in flight when the signal came is kept.
      EXPECT_GE(runs->size() + 1, read_pids(pid_file).size()) << "finished runs were lost";
    }
    Finished info_run = run({{"info", "t.sqlite"}, dir.path()});
    EXPECT_TRUE(info_run.exited && info_run.code == 0) << info_run.describe() << info_run.err;
    Finished report = run({{"report", "t.sqlite"}, dir.path()});
    EXPECT_TRUE(report.exited && report.code == 0) << report.describe() << report.err;
  }
  if (killed) {
    // The next run in the directory removes the dead run's temporary.
    Finished next = run({{"bench", "-n", "1", "--warmup", "0", "-q", "-o", "next.sqlite", "--",
                          "true"},
                         dir.path()});
    EXPECT_TRUE(next.exited && next.code == 0) << next.describe() << next.err;
    EXPECT_EQ(strata_temps(dir.path()), std::vector<std::string>{})
        << "the SIGKILLed run's temporary outlived the next run";
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (Verb v : {Verb::kCpu, Verb::kBench, Verb::kTrace}) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL}) {
      for (Phase p : {Phase::kTargetRunning, Phase::kAfterTarget}) cases.push_back({v, sig, p});
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return verb_name(c.verb) + "_SIG" + sigabbrev_np(c.sig) +
         (c.phase == Phase::kTargetRunning ? "_whileTargetRuns" : "_afterTarget");
}

INSTANTIATE_TEST_SUITE_P(Faults, SignalFaults, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace strata::faults
