// `strata cpu`, `strata report` and `strata export` end to end on real
// programs: the hotspot is named, the trace gives the same tables back, the
// exports open, and bad input and dying targets behave as docs/cli.md says.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_runner.h"

namespace strata::testing {
namespace {

// perf_event_open can be refused (containers, paranoid settings): then the
// sampling tests have nothing to test and say so.
void skip_without_perf_events(const ScratchDir& dir) {
  auto r = run_strata("cpu -o probe.sqlite -- true", dir.path());
  if (r.status != 0 && r.err.find("perf_event") != std::string::npos) {
    GTEST_SKIP() << "perf_event_open refused here: " << r.err;
  }
  std::filesystem::remove(dir.path() / "probe.sqlite");
}

nlohmann::json report_json(const ScratchDir& dir, const std::string& file,
                           const std::string& extra = "") {
  auto r = run_strata("report " + file + " --format json " + extra, dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  // One document keyed by report name; a CPU trace's profile is "cpu".
  return nlohmann::json::parse(r.out).at("cpu");
}

const std::string kHotspot = CPU_HOTSPOT_BIN;

// A CPython 3.12 interpreter: the system's, or one pyenv installed.
std::string find_python312() {
  for (const char* path : {"/usr/bin/python3.12", "/usr/local/bin/python3.12"}) {
    if (access(path, X_OK) == 0) return path;
  }
  std::filesystem::path root;
  if (const char* env = std::getenv("PYENV_ROOT")) {
    root = env;
  } else if (const char* home = std::getenv("HOME")) {
    root = std::filesystem::path(home) / ".pyenv";
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root / "versions", ec)) {
    auto python = entry.path() / "bin" / "python3";
    if (entry.path().filename().string().rfind("3.12", 0) == 0 &&
        access(python.c_str(), X_OK) == 0) {
      return python.string();
    }
  }
  return "";
}

TEST(CpuCli, NamesTheSlowNormalizationAsTheHotspot) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  auto r = run_strata("cpu -o t.sqlite -- " + kHotspot + " --mode slow --lines 6000", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("mode=slow lines=6000"), std::string::npos) << "target output passes";
  EXPECT_NE(r.out.find("ncalls  tottime  percall  cumtime  percall  filename:lineno(function)"),
            std::string::npos)
      << r.out;
  auto doc = report_json(dir, "t.sqlite", "--sort tottime --limit 1");
  ASSERT_EQ(doc["functions"].size(), 1u);
  std::string top = doc["functions"][0]["filename:lineno(function)"];
  EXPECT_NE(top.find("normalize_line_slow"), std::string::npos) << top;
  EXPECT_NE(top.find("cpu_hotspot_lib.cc:"), std::string::npos) << top;
  EXPECT_EQ(doc["header"]["mode"], "perf_event");
  EXPECT_GT(doc["header"]["samples"].get<int>(), 20);
}

// perf record's default rate (issue 20): the tutorial's short run gets
// hundreds of samples (about 4 per ms of CPU time), and the header says
// what rate it got.
TEST(CpuCli, DefaultRateIsPerfsAndTheHeaderStatesTheEffectiveRate) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  auto r = run_strata("cpu -o t.sqlite -- " + kHotspot + " --mode slow --lines 6000", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("perf_event sampling at 4000 Hz"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("effective rate "), std::string::npos) << r.out;
  auto doc = report_json(dir, "t.sqlite", "--limit 1");
  EXPECT_EQ(doc["header"]["rate_hz"].get<double>(), 4000);
  const double cpu_s = doc["header"]["cpu_s"].get<double>();
  const double samples = doc["header"]["samples"].get<double>();
  EXPECT_NEAR(doc["header"]["effective_rate_hz"].get<double>(), samples / cpu_s, 1e-6);
  EXPECT_GT(samples, 200) << "cpu " << cpu_s << " s";
}

// perf's -m: a ring of 16 pages (64 KiB) per CPU records the run as well.
TEST(CpuCli, RingSizeFlagTakesPagesOrASize) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  for (const char* ring : {"16", "64K"}) {
    auto r = run_strata(std::string("cpu -m ") + ring + " -o t.sqlite --force -- " + kHotspot +
                            " --mode slow --lines 3000",
                        dir.path());
    ASSERT_EQ(r.status, 0) << ring << ": " << r.err;
    EXPECT_GT(report_json(dir, "t.sqlite", "--limit 1")["header"]["samples"].get<int>(), 20)
        << ring;
  }
}

TEST(CpuCli, ReportGivesTheSameTablesBack) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  auto r = run_strata(
      "cpu --format csv --limit 0 -o t.sqlite -- " + kHotspot + " --mode fast --lines 20000",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto again = run_strata("report t.sqlite --format csv --limit 0", dir.path());
  ASSERT_EQ(again.status, 0) << again.err;
  // The target printed one line before the report.
  std::string printed = r.out.substr(r.out.find('\n') + 1);
  EXPECT_EQ(printed, again.out);
}

TEST(CpuCli, ExportsOpenInTheirViewersFormats) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  ASSERT_EQ(
      run_strata("cpu -o t.sqlite -- " + kHotspot + " --mode slow --lines 3000", dir.path()).status,
      0);
  ASSERT_EQ(run_strata("export t.sqlite --format speedscope -o p.json", dir.path()).status, 0);
  auto speedscope = nlohmann::json::parse(read_file(dir.path() / "p.json"));
  EXPECT_EQ(speedscope["$schema"], "https://www.speedscope.app/file-format-schema.json");
  EXPECT_FALSE(speedscope["profiles"].empty());
  ASSERT_EQ(run_strata("export t.sqlite --format folded -o p.folded", dir.path()).status, 0);
  EXPECT_NE(read_file(dir.path() / "p.folded").find("normalize_line_slow"), std::string::npos);
  ASSERT_EQ(run_strata("export t.sqlite --format svg -o p.svg", dir.path()).status, 0);
  std::string svg = read_file(dir.path() / "p.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("normalize_line_slow"), std::string::npos);
  auto again = run_strata("export t.sqlite --format svg -o p.svg", dir.path());
  EXPECT_EQ(again.status, 2) << "an existing output is kept without --force";
}

TEST(CpuCli, KilledTargetKeepsItsProfileAndReportsTheSignal) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  auto r = run_strata(
      "cpu -o t.sqlite -- sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; kill -KILL $$'",
      dir.path());
  EXPECT_EQ(r.status, 128 + 9) << r.err;
  EXPECT_NE(r.err.find("signal 9 (SIGKILL)"), std::string::npos) << r.err;
  auto doc = report_json(dir, "t.sqlite");
  EXPECT_GT(doc["header"]["samples"].get<int>(), 10);
}

TEST(CpuCli, StrippedBinaryGivesModuleOffsetFrames) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  auto stripped = dir.path() / "cpu_hotspot.stripped";
  std::filesystem::copy_file(kHotspot, stripped);
  ASSERT_EQ(std::system(("strip --strip-all '" + stripped.string() + "'").c_str()), 0);
  auto r =
      run_strata("cpu -o t.sqlite -- ./cpu_hotspot.stripped --mode slow --lines 3000", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  // The stripped module's hottest row is an address (module+0xOFFSET): the
  // hot loop has no symbol left (the rows named from .dynsym, which strip
  // keeps, are cold). Its hottest row, not the profile's: under
  // `make test-asan` the sanitizer's exit-time leak scan (named, in libasan)
  // can be hotter.
  auto doc = report_json(dir, "t.sqlite", "--sort tottime --limit 0");
  std::string hottest;
  for (const auto& row : doc["functions"]) {
    std::string label = row["filename:lineno(function)"];
    if (label.find("cpu_hotspot.stripped") != std::string::npos) {
      hottest = label;
      break;
    }
  }
  EXPECT_NE(hottest.find("(cpu_hotspot.stripped+0x"), std::string::npos) << hottest;
}

TEST(CpuCli, FramePointerModeSamples) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  auto r = run_strata(
      "cpu --call-graph fp -o t.sqlite -- " + kHotspot + " --mode slow --lines 3000", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(report_json(dir, "t.sqlite")["header"]["samples"].get<int>(), 10);
}

TEST(CpuCli, PythonFunctionsAppearByName) {
  std::string python = find_python312();
  if (python.empty()) GTEST_SKIP() << "no CPython 3.12 here";
  ScratchDir dir;
  skip_without_perf_events(dir);
  std::ofstream(dir.path() / "two.py") << "def heavy(n):\n    s = 0\n    for i in range(n):\n"
                                          "        s += i * i\n    return s\n\n"
                                          "for _ in range(30):\n    heavy(50000)\n";
  auto r = run_strata("cpu -o t.sqlite -- " + python + " two.py", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto doc = report_json(dir, "t.sqlite", "--sort tottime --limit 1");
  std::string top = doc["functions"][0]["filename:lineno(function)"];
  EXPECT_NE(top.find("two.py"), std::string::npos) << top;
  EXPECT_NE(top.find("(heavy)"), std::string::npos) << top;
}

// cProfile's view by default: rooted at <module>, builtins named as cProfile
// names them; --native (report and export) gives the mixed stacks back.
// Perf-map names (3.12 under the in-process sampler) and frames read from
// memory (3.12, Debian's 3.11) give the same view.
TEST(CpuCli, PythonViewNamesBuiltinsAndNativeShowsTheInterpreter) {
  struct Run {
    std::string python;
    std::string sampler;
    bool symbols;  // the interpreter's C functions have their names (Debian's is stripped)
  };
  std::vector<Run> runs;
  if (std::string python = find_python312(); !python.empty()) {
    runs.push_back({python, "perf", true});
    runs.push_back({python, "in-process", true});
  }
  if (access("/usr/bin/python3.11", X_OK) == 0) {
    runs.push_back({"/usr/bin/python3.11", "perf", false});
  }
  if (runs.empty()) GTEST_SKIP() << "no CPython 3.12 nor /usr/bin/python3.11 here";
  for (const auto& [python, sampler, symbols] : runs) {
    SCOPED_TRACE(python + " --sampler " + sampler);
    ScratchDir dir;
    skip_without_perf_events(dir);
    std::ofstream(dir.path() / "sorts.py") << "import random\n"
                                              "data = [random.random() for _ in range(100000)]\n"
                                              "def work():\n"
                                              "    for _ in range(15):\n"
                                              "        sorted(data)\n"
                                              "work()\n";
    auto r = run_strata("cpu --sampler " + sampler + " -o t.sqlite -- " + python + " sorts.py",
                        dir.path());
    ASSERT_EQ(r.status, 0) << r.err;
    auto labels = [&](const std::string& flags) {
      std::vector<std::string> out;
      const auto doc = report_json(dir, "t.sqlite", flags + " --limit 0");
      for (const auto& row : doc["functions"]) {
        out.push_back(row["filename:lineno(function)"]);
      }
      return out;
    };
    auto has = [](const std::vector<std::string>& rows, const std::string& part) {
      return std::any_of(rows.begin(), rows.end(),
                         [&](const std::string& l) { return l.find(part) != std::string::npos; });
    };
    auto python_rows = labels("--sort tottime");
    ASSERT_FALSE(python_rows.empty());
    EXPECT_EQ(python_rows[0], "{built-in method builtins.sorted}");
    const std::string root = labels("--sort cumtime")[0];
    EXPECT_TRUE(root.ends_with("sorts.py:1(<module>)")) << root;
    EXPECT_FALSE(has(python_rows, "(Py_RunMain)"))
        << "the interpreter's frames rootward of <module>";
    EXPECT_FALSE(has(python_rows, "(_PyEval_EvalFrameDefault)"));

    auto native_rows = labels("--native --sort tottime");
    EXPECT_TRUE(has(native_rows, "(_PyEval_EvalFrameDefault)"));
    if (symbols) {
      EXPECT_TRUE(has(native_rows, "(builtin_sorted)"));
    }
    EXPECT_FALSE(has(native_rows, "{built-in method"));

    ASSERT_EQ(run_strata("export t.sqlite --format folded -o py.folded", dir.path()).status, 0);
    ASSERT_EQ(
        run_strata("export t.sqlite --native --format folded -o native.folded", dir.path()).status,
        0);
    std::ifstream py_in(dir.path() / "py.folded");
    std::string py_folded((std::istreambuf_iterator<char>(py_in)), {});
    std::ifstream native_in(dir.path() / "native.folded");
    std::string native_folded((std::istreambuf_iterator<char>(native_in)), {});
    EXPECT_NE(py_folded.find(";work;built-in method builtins.sorted "), std::string::npos);
    EXPECT_EQ(py_folded.find("Py_RunMain"), std::string::npos);
    EXPECT_NE(native_folded.find("Py_RunMain"), std::string::npos);
  }
}

// Distributions strip their interpreter (.dynsym only): builtins are then
// known by the CFI's function starts. pyenv's python3.12 loads libpython
// from LD_LIBRARY_PATH, so a stripped copy stands in for Ubuntu's.
TEST(CpuCli, AStrippedInterpreterStillNamesBuiltins) {
  std::string python = find_python312();
  if (python.empty()) GTEST_SKIP() << "no CPython 3.12 here";
  auto libpython =
      std::filesystem::path(python).parent_path().parent_path() / "lib" / "libpython3.12.so.1.0";
  if (!std::filesystem::exists(libpython)) GTEST_SKIP() << "no shared libpython to strip";
  ScratchDir dir;
  skip_without_perf_events(dir);
  std::filesystem::create_directory(dir.path() / "lib");
  std::filesystem::copy_file(libpython, dir.path() / "lib" / "libpython3.12.so.1.0");
  ASSERT_EQ(std::system(("objcopy --strip-all '" +
                         (dir.path() / "lib" / "libpython3.12.so.1.0").string() + "'")
                            .c_str()),
            0);
  std::ofstream(dir.path() / "sums.py") << "data = list(range(200000))\n"
                                           "for _ in range(300):\n"
                                           "    sum(data)\n";
  auto r =
      run_strata("cpu -o t.sqlite -- env LD_LIBRARY_PATH=lib " + python + " sums.py", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto doc = report_json(dir, "t.sqlite", "--sort tottime --limit 1");
  ASSERT_EQ(doc["functions"].size(), 1u);
  EXPECT_EQ(doc["functions"][0]["filename:lineno(function)"], "{built-in method builtins.sum}");
}

// --imports: import time per module, as python -X importtime ranks it.
TEST(CpuCli, ImportsPerModule) {
  std::string python = find_python312();
  if (python.empty()) GTEST_SKIP() << "no CPython 3.12 here";
  ScratchDir dir;
  skip_without_perf_events(dir);
  std::ofstream(dir.path() / "imports.py") << "import asyncio, email.parser, json\n";
  // Imports nest deep: the largest stack copy keeps their outer frames.
  auto r =
      run_strata("cpu --stack-size 65528 -o t.sqlite -- " + python + " imports.py", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto rows = report_json(dir, "t.sqlite", "--imports --limit 0");
  ASSERT_TRUE(rows.is_array()) << rows.dump();
  bool asyncio = false;
  for (const auto& row : rows) {
    EXPECT_GE(row["cumulative_us"].get<double>(), row["self_us"].get<double>()) << row.dump();
    if (row["module"] == "asyncio") {
      asyncio = true;
      EXPECT_EQ(row["depth"], 0);
      EXPECT_GT(row["cumulative_us"].get<double>(), 0);
    }
  }
  EXPECT_TRUE(asyncio) << rows.dump();
  auto both = run_strata("report t.sqlite --imports --callers", dir.path());
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err_lines().size(), 1u) << both.err;
}

// --lines and --annotate: where in the hot function the time goes.
TEST(CpuCli, LinesAndAnnotateShowTheHotLine) {
  ScratchDir dir;
  skip_without_perf_events(dir);
  auto r = run_strata("cpu -o t.sqlite -- " + kHotspot + " --mode slow --lines 6000", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto rows = report_json(dir, "t.sqlite", "--lines --filter normalize_line_slow --limit 0");
  std::set<std::string> labels;
  for (const auto& row : rows["functions"]) labels.insert(row["filename:lineno(function)"]);
  EXPECT_GE(labels.size(), 3u) << "one row per sampled line of the function";
  auto lines = report_json(dir, "t.sqlite", "--annotate normalize_line_slow");
  ASSERT_TRUE(lines.is_array() && !lines.empty()) << lines.dump();
  const nlohmann::json* hottest = &lines[0];
  for (const auto& l : lines) {
    if (l["self"].get<double>() > (*hottest)["self"].get<double>()) hottest = &l;
  }
  // The source is found (the debug info's path, joined to its compilation
  // directory) and the hottest line is inside the copying loop.
  std::string source = (*hottest)["source"];
  EXPECT_NE(source.find("for"), std::string::npos) << hottest->dump();
  auto missing = run_strata("report t.sqlite --annotate no_such_function", dir.path());
  EXPECT_EQ(missing.status, 2);
  ASSERT_EQ(missing.err_lines().size(), 1u) << missing.err;
  EXPECT_NE(missing.err.find("no_such_function"), std::string::npos);
}

// strata reads CPython 3.8-3.13's frames from its memory at each sample
// (sampler/python_stack.h). Debian 12's python3 (3.11) runs wherever it is
// installed (CI); pyenv's 3.8-3.13 where they are.
std::vector<std::string> pythons_read_from_memory() {
  std::vector<std::string> out;
  if (access("/usr/bin/python3.11", X_OK) == 0) out.push_back("/usr/bin/python3.11");
  const char* home = std::getenv("HOME");
  for (const char* version : {"3.8.18", "3.9.18", "3.10.13", "3.11.7", "3.12.1", "3.13.0"}) {
    if (home == nullptr) break;
    std::string minor = std::string(version).substr(0, std::string(version).rfind('.'));
    auto python =
        std::filesystem::path(home) / ".pyenv/versions" / version / "bin" / ("python" + minor);
    if (access(python.c_str(), X_OK) == 0) out.push_back(python.string());
  }
  return out;
}

// Nested calls and one hot function whose line 4 does nearly all the work.
constexpr const char* kNestedProgram =
    "def hot(n):\n"
    "    s = 0\n"
    "    for i in range(n):\n"
    "        s += (i * i * i) %% 7 + (i // 3) * (i %% 5) - (i & 255)\n"
    "    return s\n"
    "\n"
    "def middle(k):\n"
    "    return hot(k) + 1\n"
    "\n"
    "def outer():\n"
    "    t = 0\n"
    "    for _ in range(%d):\n"
    "        t += middle(40000)\n"
    "    return t\n"
    "\n"
    "outer()\n";

std::string nested_program(int rounds) {
  char text[1024];
  std::snprintf(text, sizeof text, kNestedProgram, rounds);
  return text;
}

// The rows of prog.py's functions in the Python view, and the hottest one.
struct PythonRows {
  std::set<std::string> labels;
  std::string hottest;
};

PythonRows python_rows(const ScratchDir& dir, const std::string& trace) {
  PythonRows rows;
  auto doc = report_json(dir, trace, "--sort tottime --limit 0");
  for (const auto& row : doc["functions"]) {
    std::string label = row["filename:lineno(function)"];
    if (label.find("prog.py") == std::string::npos) continue;
    if (rows.labels.empty()) rows.hottest = label;
    rows.labels.insert(label);
  }
  return rows;
}

TEST(CpuCli, PythonIsNamedFromItsMemoryWithLines) {
  auto pythons = pythons_read_from_memory();
  if (pythons.empty()) GTEST_SKIP() << "no CPython 3.8-3.13 here";
  ScratchDir dir;
  skip_without_perf_events(dir);
  std::ofstream(dir.path() / "prog.py") << nested_program(25);
  const std::set<std::string> expected = {"prog.py:1(hot)", "prog.py:7(middle)",
                                          "prog.py:10(outer)", "prog.py:1(<module>)"};
  for (const std::string& python : pythons) {
    SCOPED_TRACE(python);
    auto r = run_strata("cpu -o t.sqlite --force -- " + python + " prog.py", dir.path());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("could not be named"), std::string::npos) << r.err;
    PythonRows rows = python_rows(dir, "t.sqlite");
    std::set<std::string> short_labels;
    for (const auto& label : rows.labels) short_labels.insert(label.substr(label.rfind('/') + 1));
    EXPECT_EQ(short_labels, expected) << r.err;
    EXPECT_TRUE(rows.hottest.ends_with("prog.py:1(hot)")) << rows.hottest;
    // Rooted at <module>: nothing of the interpreter above it.
    auto cum = report_json(dir, "t.sqlite", "--sort cumtime --limit 1");
    std::string root = cum["functions"][0]["filename:lineno(function)"];
    EXPECT_TRUE(root.ends_with("prog.py:1(<module>)")) << root;
    // --lines and --annotate: the hot line is line 4.
    auto annotated = report_json(dir, "t.sqlite", "--annotate hot");
    ASSERT_TRUE(annotated.is_array() && !annotated.empty()) << annotated.dump();
    const nlohmann::json* hottest = &annotated[0];
    for (const auto& l : annotated) {
      if (l["self"].get<double>() > (*hottest)["self"].get<double>()) hottest = &l;
    }
    std::string source = (*hottest)["source"];
    EXPECT_NE(source.find("s += (i * i * i)"), std::string::npos) << annotated.dump();
    auto lines = report_json(dir, "t.sqlite", "--lines --filter hot --limit 1");
    ASSERT_FALSE(lines["functions"].empty()) << lines.dump();
    std::string top_line = lines["functions"][0]["filename:lineno(function)"];
    EXPECT_NE(top_line.find("prog.py:4"), std::string::npos) << top_line;
  }
}

// A stack copy too small for the native stack cuts it, not the Python
// stack read from memory: the Python view keeps every frame to <module>,
// and stderr says how many cut stacks are whole in Python.
TEST(CpuCli, CutNativeStacksKeepTheirWholePythonStacks) {
  auto pythons = pythons_read_from_memory();
  if (pythons.empty()) GTEST_SKIP() << "no CPython 3.8-3.13 here";
  ScratchDir dir;
  skip_without_perf_events(dir);
  // Most time at the bottom, in a loop long enough (milliseconds) that the
  // stack seldom changes between a sample and its read, even on a loaded
  // machine: a stack that changed keeps only its (cut) native frames.
  std::ofstream(dir.path() / "deep.py") << "def rec(d):\n"
                                           "    if d == 0:\n"
                                           "        s = 0\n"
                                           "        for i in range(300000):\n"
                                           "            s += i * i % 7\n"
                                           "        return s\n"
                                           "    return rec(d - 1) + 1\n"
                                           "for _ in range(6):\n"
                                           "    rec(40)\n";
  auto r =
      run_strata("cpu --stack-size 1024 -o t.sqlite -- " + pythons[0] + " deep.py", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("stacks were deeper than the 1024-byte stack copy"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("read from memory, are whole"), std::string::npos) << r.err;
  ASSERT_EQ(run_strata("export t.sqlite --format folded -o py.folded", dir.path()).status, 0);
  std::ifstream in(dir.path() / "py.folded");
  size_t deepest = 0;
  long all = 0;
  long whole = 0;  // samples in rec whose stack goes down to <module>
  for (std::string line; std::getline(in, line);) {
    const long n = std::stol(line.substr(line.rfind(' ') + 1));
    all += n;
    size_t recs = 0;
    for (size_t at = line.find(";rec"); at != std::string::npos; at = line.find(";rec", at + 1)) {
      ++recs;
    }
    deepest = std::max(deepest, recs);
    if (line.starts_with("<module>;rec")) whole += n;
  }
  EXPECT_GE(deepest, 41u) << "rec(40) down to rec(0)";
  EXPECT_GT(whole * 2, all) << whole << " of " << all << " samples";
}

// The same program gives the same function rows from memory as from a 3.12
// perf map (which the in-process sampler reads).
TEST(CpuCli, PythonFromMemoryHasTheRowsAPerfMapGives) {
  std::string python312 = find_python312();
  if (python312.empty()) GTEST_SKIP() << "needs CPython 3.12";
  ScratchDir dir;
  skip_without_perf_events(dir);
  std::ofstream(dir.path() / "prog.py") << nested_program(15);
  ASSERT_EQ(run_strata("cpu -o a.sqlite -- " + python312 + " prog.py", dir.path()).status, 0);
  ASSERT_EQ(
      run_strata("cpu --sampler in-process -o b.sqlite -- " + python312 + " prog.py", dir.path())
          .status,
      0);
  const auto from_memory = python_rows(dir, "a.sqlite").labels;
  EXPECT_EQ(from_memory.size(), 4u);
  EXPECT_EQ(from_memory, python_rows(dir, "b.sqlite").labels);
}

// CPython 3.12+ runs perf trampolines (which make each Python call a C-level
// call, deepening its native stacks) only where strata needs its perf maps:
// with the in-process sampler, or because the user asked.
TEST(CpuCli, PerfMapsAreAskedForOnlyWhereMemoryCannotBeRead) {
  std::string python = find_python312();
  if (python.empty()) GTEST_SKIP() << "needs CPython 3.12";
  ScratchDir dir;
  skip_without_perf_events(dir);
  std::ofstream(dir.path() / "tramp.py")
      << "import sys\nprint('trampoline', sys.is_stack_trampoline_active())\n";
  auto active = [&](const std::string& flags) {
    auto r =
        run_strata("cpu --force -o t.sqlite " + flags + " -- " + python + " tramp.py", dir.path());
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out.find("trampoline True") != std::string::npos;
  };
  const char* inherited = std::getenv("PYTHONPERFSUPPORT");
  const std::string saved = inherited ? inherited : "";
  unsetenv("PYTHONPERFSUPPORT");
  EXPECT_FALSE(active("")) << "frames read from memory need no perf map";
  EXPECT_TRUE(active("--sampler in-process"));
  setenv("PYTHONPERFSUPPORT", "1", 1);  // the user's choice stands
  EXPECT_TRUE(active(""));
  if (inherited) {
    setenv("PYTHONPERFSUPPORT", saved.c_str(), 1);
  } else {
    unsetenv("PYTHONPERFSUPPORT");
  }
}

// Where the frames cannot be read, one note names the version and what is
// required: the in-process sampler reads no memory.
TEST(CpuCli, APythonThatCannotBeReadGetsOneNote) {
  const char* python = "/usr/bin/python3.11";  // Debian 12's python3
  if (access(python, X_OK) != 0) GTEST_SKIP() << "no " << python;
  ScratchDir dir;
  std::ofstream(dir.path() / "loop.py") << "s = 0\nfor i in range(300000):\n    s += i\n";
  auto r = run_strata("cpu --sampler in-process -o t.sqlite -- " + std::string(python) + " loop.py",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  int notes = 0;
  for (const auto& line : r.err_lines()) {
    if (line.find("is CPython 3.11") != std::string::npos) {
      ++notes;
      EXPECT_NE(line.find("--sampler perf"), std::string::npos) << line;
      EXPECT_NE(line.find("3.12 or later"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(notes, 1) << r.err;
}

TEST(CpuCli, InstrumentedModeCountsEveryCallAndStoresThem) {
  ScratchDir dir;
  auto r = run_strata("cpu --instrument -o t.sqlite -- " CPU_HOTSPOT_INSTRUMENTED_BIN
                      " --mode slow --lines 600",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  auto doc = report_json(dir, "t.sqlite", "--filter normalize_line_slow");
  ASSERT_EQ(doc["functions"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["functions"][0]["ncalls"], 600);  // exactly --lines
  EXPECT_EQ(doc["header"]["mode"], "instrumented");
  auto plain = run_strata("cpu --instrument -o u.sqlite -- " + kHotspot + " --mode fast --lines 10",
                          dir.path());
  EXPECT_NE(plain.status, 0);
  EXPECT_NE(plain.err.find("-finstrument-functions"), std::string::npos) << plain.err;
}

TEST(CpuCli, BadInputExitsWithTheDocumentedStatus) {
  ScratchDir dir;
  auto missing = run_strata("cpu -o t.sqlite -- ./no-such-program", dir.path());
  EXPECT_EQ(missing.status, 127);
  ASSERT_EQ(missing.err_lines().size(), 1u) << missing.err;
  EXPECT_EQ(missing.err_lines()[0],
            "strata: cannot start './no-such-program': No such file or directory");
  for (const char* args : {"cpu --call-graph lbr -- true", "cpu -F 0 -- true", "cpu", "report",
                           "export nothing.sqlite --format speedscope -o x.json",
                           "export nothing.sqlite --format pdf -o x.pdf"}) {
    auto r = run_strata(args, dir.path());
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << args << ": " << r.err;
  }
  ASSERT_EQ(run_strata("bench -n 1 --warmup 0 -q -o b.sqlite -- true", dir.path()).status, 0);
  auto no_profile = run_strata("export b.sqlite --format folded -o x.folded", dir.path());
  EXPECT_EQ(no_profile.status, 2);
  EXPECT_NE(no_profile.err.find("no CPU profile"), std::string::npos) << no_profile.err;
}

}  // namespace
}  // namespace strata::testing
