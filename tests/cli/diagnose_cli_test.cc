// `strata diagnose` end to end on CPU-only programs: the verdict's JSON
// shape, the layer log, --budget skipping, exit statuses, and that `strata
// report FILE --report diagnosis` prints the same verdict again.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "store/diagnose_rows.h"
#include "store/trace_db.h"

namespace strata::testing {
namespace {

const std::string kHotspot = CPU_HOTSPOT_BIN;

nlohmann::json parse(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

const nlohmann::json* layer(const nlohmann::json& v, const std::string& name) {
  for (const auto& l : v["layers"]) {
    if (l["layer"] == name) return &l;
  }
  return nullptr;
}

TEST(DiagnoseCli, CpuBoundProgramJsonVerdictAndItsReprint) {
  ScratchDir dir;
  // The recorded run's output passes through: the program sends its own away.
  auto r = run_strata("diagnose -n 2 --format json -o d.sqlite -- sh -c 'exec " + kHotspot +
                          " --mode slow --lines 3000 >/dev/null'",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string& out = r.out;
  auto v = parse(out);
  for (const char* key : {"source", "baseline", "recorded_run", "startup", "window", "range", "cpu",
                          "verdict", "findings", "layers", "budget_s", "thresholds"}) {
    EXPECT_TRUE(v.contains(key)) << key;
  }
  EXPECT_EQ(v["baseline"]["runs"], 2);
  EXPECT_EQ(v["baseline"]["succeeded"], 2);
  EXPECT_GT(v["baseline"]["wall_ns"]["median"].get<double>(), 0);
  // The recorded run beside the baseline: its own wall time, over the baseline's median.
  ASSERT_TRUE(v["recorded_run"].is_object()) << out;
  const double recorded_wall = v["recorded_run"]["wall_ns"].get<double>();
  EXPECT_GT(recorded_wall, 0);
  EXPECT_NEAR(v["recorded_run"]["wall_ratio"].get<double>(),
              recorded_wall / v["baseline"]["wall_ns"]["median"].get<double>(), 1e-9);
  // Every process faults its pages in: both runs' counts are there, and above 0.
  EXPECT_GT(v["recorded_run"]["minor_faults"].get<int64_t>(), 0) << out;
  EXPECT_GT(v["baseline"]["minor_faults"]["median"].get<double>(), 0) << out;
  // On the CPU, or (on an oversubscribed machine, where the run waits for a
  // CPU) off it: wall and CPU time cannot tell which; the hotspot is named either way.
  const std::string layer_named = v["verdict"]["explained_by"];
  EXPECT_TRUE(layer_named == "cpu" || layer_named == "off-cpu") << out;
  EXPECT_TRUE(v["window"].is_null()) << "no GPU activity";
  EXPECT_TRUE(v["findings"].is_array());
  EXPECT_EQ(v["thresholds"]["min_share"], 0.10);
  ASSERT_NE(layer(v, "baseline"), nullptr);
  EXPECT_TRUE((*layer(v, "baseline"))["ran"].get<bool>());
  ASSERT_NE(layer(v, "cpu"), nullptr);
  EXPECT_TRUE((*layer(v, "cpu"))["ran"].get<bool>());
  ASSERT_NE(layer(v, "kernels"), nullptr);
  EXPECT_FALSE((*layer(v, "kernels"))["ran"].get<bool>());
  EXPECT_FALSE((*layer(v, "kernels"))["reason"].get<std::string>().empty());
  // The hottest function is the tutorial's.
  ASSERT_FALSE(v["cpu"]["hottest"].empty()) << out;
  EXPECT_NE(v["verdict"]["text"].get<std::string>().find("normalize_line_slow"), std::string::npos)
      << out;

  // The trace holds what the verdict needs: the report prints it again.
  auto again = run_strata("report d.sqlite --report diagnosis --format json", dir.path());
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, out);
  auto text = run_strata("report d.sqlite --report diagnosis", dir.path());
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("Verdict: the "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  kernels   skipped"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" page faults (baseline median "), std::string::npos) << text.out;
  // And the bench tables are there for strata report / compare.
  auto reader = store::TraceReader::open((dir.path() / "d.sqlite").string());
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->bench_runs()->size(), 2u);
  EXPECT_EQ(reader->run()->verb, "diagnose");
}

TEST(DiagnoseCli, TextVerdictEqualsTheReportsReprint) {
  ScratchDir dir;
  auto r = run_strata("diagnose -n 1 -o d.sqlite -- sleep 0.3", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Verdict: the program is off the CPU"), std::string::npos) << r.out;
  auto again = run_strata("report d.sqlite --report diagnosis", dir.path());
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
}

// The default baseline: two runs, a third only when they differ by more
// than 5 %; the layer log says which.
TEST(DiagnoseCli, DefaultBaselineStopsAtTwoRunsThatAgree) {
  ScratchDir dir;
  auto r = run_strata("diagnose --no-html --format json -o d.sqlite -- sleep 0.2", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto v = parse(r.out);
  auto reader = store::TraceReader::open((dir.path() / "d.sqlite").string());
  ASSERT_TRUE(reader.ok());
  const auto runs = *reader->bench_runs();
  ASSERT_GE(runs.size(), 2u);
  const double a = static_cast<double>(runs[0].wall_ns), b = static_cast<double>(runs[1].wall_ns);
  const bool agree = std::abs(a - b) <= 0.05 * std::min(a, b);
  EXPECT_EQ(runs.size(), agree ? 2u : 3u);
  EXPECT_EQ(v["baseline"]["runs"], runs.size());
  const std::string reason = (*layer(v, "baseline"))["reason"];
  EXPECT_EQ(reason.find("no third") != std::string::npos, agree) << reason;
}

TEST(DiagnoseCli, DefaultBaselineRunsAThirdTimeWhenTheTwoDisagree) {
  ScratchDir dir;
  // 0.05 s the first time, 0.4 s after: the two runs differ eightfold.
  auto r = run_strata(
      "diagnose --no-html --format json -o d.sqlite -- sh -c "
      "'if [ -e ran ]; then sleep 0.4; else touch ran; sleep 0.05; fi'",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto v = parse(r.out);
  EXPECT_EQ(v["baseline"]["runs"], 3);
  EXPECT_EQ((*layer(v, "baseline"))["reason"].get<std::string>().find("no third"),
            std::string::npos);
}

TEST(DiagnoseCli, BudgetSkipsTheCostlyLayersAndSaysSo) {
  ScratchDir dir;
  auto r =
      run_strata("diagnose -n 5 --budget 0.05 --format json -o d.sqlite -- sleep 0.2", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto v = parse(r.out);
  EXPECT_EQ(v["baseline"]["runs"], 1) << "the budget stops the baseline after one run";
  EXPECT_NE((*layer(v, "baseline"))["reason"].get<std::string>().find("--budget stopped it"),
            std::string::npos);
  for (const char* name : {"cpu", "timeline", "ops", "kernels"}) {
    ASSERT_NE(layer(v, name), nullptr) << name;
    EXPECT_FALSE((*layer(v, name))["ran"].get<bool>()) << name;
    EXPECT_EQ((*layer(v, name))["reason"].get<std::string>().rfind("--budget: ", 0), 0u) << name;
  }
  EXPECT_EQ(v["budget_s"], 0.05);
  EXPECT_TRUE(v["cpu"].is_null());
  EXPECT_EQ(v["verdict"]["explained_by"], "off-cpu") << "the baseline alone still judges";
}

TEST(DiagnoseCli, FailingTargetExitsWithItsStatusAndKeepsTheTrace) {
  ScratchDir dir;
  auto r = run_strata("diagnose -n 1 -o d.sqlite -- sh -c 'exit 3'", dir.path());
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "d.sqlite"));
  EXPECT_NE(r.out.find("Verdict:"), std::string::npos) << r.out;
  auto killed = run_strata("diagnose -n 1 -o k.sqlite -- sh -c 'kill -SEGV $$'", dir.path());
  EXPECT_EQ(killed.status, 128 + 11) << killed.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "k.sqlite"));
  auto again = run_strata("report k.sqlite --report diagnosis", dir.path());
  EXPECT_EQ(again.status, 0) << again.err;
}

// Issue 22: diagnose writes the offline page beside its trace (d.sqlite:
// d.html), with the verdict in it; an existing page is refused before
// anything runs unless --force; --no-html writes none.
TEST(DiagnoseCli, WritesItsHtmlPageBesideTheTrace) {
  ScratchDir dir;
  auto r = run_strata("diagnose -n 1 -o d.sqlite -- sleep 0.2", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("strata: wrote d.html ("), std::string::npos) << r.err;
  const std::string page = read_file(dir.path() / "d.html");
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
  // The verb's own verdict, not the GPU timeline's diagnosis alone.
  EXPECT_NE(page.find("Verdict: the program is off the CPU"), std::string::npos);
  EXPECT_NE(page.find("Layer kernels: skipped"), std::string::npos);

  std::ofstream(dir.path() / "mine.html") << "the user's page";
  auto kept = run_strata("diagnose -n 1 -o mine.sqlite -- true", dir.path());
  EXPECT_EQ(kept.status, 2);
  ASSERT_EQ(kept.err_lines().size(), 1u) << kept.err;
  EXPECT_EQ(kept.err_lines()[0],
            "strata: mine.html exists (the page beside the trace); use --force to overwrite, or "
            "--no-html");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "mine.sqlite")) << "nothing ran";
  EXPECT_EQ(read_file(dir.path() / "mine.html"), "the user's page");

  auto forced = run_strata("diagnose -n 1 --force -o mine.sqlite -- true", dir.path());
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(read_file(dir.path() / "mine.html").find("Content-Security-Policy"), std::string::npos);

  auto none = run_strata("diagnose -n 1 --no-html -o n.sqlite -- true", dir.path());
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "n.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "n.html"));
}

TEST(DiagnoseCli, UsageErrorsExit2BeforeAnythingRuns) {
  ScratchDir dir;
  struct Case {
    const char* args;
    const char* line;
  };
  const Case cases[] = {
      {"diagnose --threshold nope=1 -o d.sqlite -- true",
       "strata: --threshold 'nope=1': unknown threshold (known: min_share, syncs_per_launch, "
       "kernel_share, "},  // the rest of the rules' table follows
      {"diagnose --threshold min_share=x -o d.sqlite -- true",
       "strata: --threshold 'min_share=x': the value is not a number"},
      {"diagnose --format csv -o d.sqlite -- true", "strata: --format 'csv': use table or json"},
      {"diagnose --budget 0 -o d.sqlite -- true",
       "strata: --budget must be a positive number of seconds"},
  };
  for (const auto& c : cases) {
    auto r = run_strata(c.args, dir.path());
    EXPECT_EQ(r.status, 2) << c.args;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    // The line starts so (the known thresholds' list is the rules' table).
    EXPECT_EQ(r.err_lines()[0].substr(0, std::string(c.line).size()), c.line);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "d.sqlite")) << c.args;
  }
  auto missing = run_strata("diagnose -o d.sqlite -- ./no-such-program", dir.path());
  EXPECT_EQ(missing.status, 127);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "d.sqlite"));
}

TEST(DiagnoseCli, RangeThatNamesNothingExits2AndKeepsTheTrace) {
  ScratchDir dir;
  auto r = run_strata("diagnose -n 1 --range step -o d.sqlite -- true", dir.path());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--range 'step': the trace has no NVTX range"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "d.sqlite"));
}

// A damaged setting in the trace is one line naming the file and table, exit
// 2, never a verdict judged by a threshold other than the one stored.
TEST(DiagnoseCli, DamagedStoredSettingIsAnInputError) {
  ScratchDir dir;
  const auto copy = dir.path() / "d.sqlite";
  std::filesystem::copy_file(
      std::filesystem::path(STRATA_TEST_DATA) / "diagnose-cpu_hotspot-slow" / "trace.sqlite", copy);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE strata_diagnose_settings SET value = 'abc' WHERE name = "
                         "'min_share'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto r = run_strata("report d.sqlite --report diagnosis", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0],
            "strata: d.sqlite: strata_diagnose_settings: 'min_share=abc': the value is not a "
            "number");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace strata::testing
