// Control bytes in names never reach the terminal raw (issue 21 item 9).
// Copies of recorded traces get an escape sequence, CR, LF, DEL and TAB
// appended to every name they hold (StringIds: kernels, API calls, NVTX
// ranges, functions, files, threads; kernel metric rows; bench commands and
// metrics; the run's command), one name also an invalid UTF-8 byte, and the
// copies are named with the same bytes. Every report in table and CSV, `info`
// and every message must then hold no byte below 0x20 but the line ends and
// no 0x7f; JSON must parse and hold the names exactly (\u00NN escapes).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "util/run_binary.h"
#include "util/temp_dir.h"

namespace strata {
namespace {

using test_util::TempDir;

// What is appended to every name, and its escaped form in text output.
const std::string kSuffix = "\x1b[31m\r\n\x7f\t";
const std::string kEscaped = "\\x1b[31m\\x0d\\x0a\\x7f\\x09";
// The SQL expression of kSuffix.
const char* kSqlSuffix = "(char(27) || '[31m' || char(13) || char(10) || char(127) || char(9))";
// The file names of the copies carry the same bytes.
const std::string kFileName = "trace\x1b[31m\r\n\x7f\t.sqlite";

using Outcome = test_util::RunOutcome;

Outcome run_strata(const TempDir& dir, const std::vector<std::string>& args) {
  return test_util::run_binary(STRATA_BIN, args, dir.path());
}

// Copies `fixture` into `dir` under kFileName and runs `sql` on the copy.
std::string hostile_copy(const TempDir& dir, const std::string& fixture, const std::string& sql) {
  std::string path = dir.file(kFileName);
  std::filesystem::copy_file(std::string(STRATA_TEST_DATA) + "/" + fixture, path,
                             std::filesystem::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return path;
}

// Every name in StringIds gets the suffix; the first one also an 0xff byte.
std::string string_ids_sql() {
  return std::string("UPDATE StringIds SET value = value || ") + kSqlSuffix +
         "; UPDATE StringIds SET value = value || CAST(X'FF' AS TEXT) "
         "WHERE id = (SELECT min(id) FROM StringIds);";
}

// The first byte of `text` a terminal would act on, or -1.
long first_control(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return static_cast<long>(i);
  }
  return -1;
}

// Text for a terminal: no control byte in stdout or stderr, each stderr line
// a strata message, and the names there, escaped.
void expect_terminal_safe(const Outcome& r, const std::string& what, bool names_in_stdout) {
  SCOPED_TRACE(what);
  long at = first_control(r.out);
  EXPECT_EQ(at, -1) << "stdout byte " << at << ":\n" << r.out.substr(at < 0 ? 0 : at, 200);
  at = first_control(r.err);
  EXPECT_EQ(at, -1) << "stderr byte " << at << ":\n" << r.err;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("strata: ", 0), 0u) << "a line that is no message: " << line;
  }
  if (names_in_stdout) {
    EXPECT_NE(r.out.find(kEscaped), std::string::npos) << "names not printed escaped:\n" << r.out;
  }
}

void collect_strings(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_string()) out.push_back(j.get<std::string>());
  if (j.is_structured()) {
    for (const auto& item : j) collect_strings(item, out);
  }
}

// JSON: one document that parses and holds a name with the suffix exactly.
// `del_escaped`: strata's reports also write DEL as \u007f (the exports
// keep JSON's raw DEL; they are files, not terminal text).
void expect_json_exact(const Outcome& r, const std::string& what, bool del_escaped = true) {
  SCOPED_TRACE(what);
  EXPECT_EQ(r.status, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.out.substr(0, 400);
  std::vector<std::string> strings;
  collect_strings(doc, strings);
  bool exact = false;
  for (const auto& s : strings) exact = exact || s.find(kSuffix) != std::string::npos;
  EXPECT_TRUE(exact) << "no name holds the control bytes exactly";
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "raw ESC in JSON text";
  if (del_escaped) {
    EXPECT_EQ(r.out.find('\x7f'), std::string::npos) << "raw DEL in JSON text";
  }
}

TEST(ControlBytes, GpuReportsOfAnNsysExport) {
  TempDir dir("strata-control-bytes");
  std::string file = hostile_copy(dir, "nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite",
                                  string_ids_sql() + "UPDATE NVTX_EVENTS SET text = text || " +
                                      kSqlSuffix + " WHERE text IS NOT NULL;");
  std::string all_text;  // a long kernel name is cut in table format, suffix and all
  for (const char* report : {"cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
                             "cuda_gpu_mem_size_sum", "nvtx_sum", "cuda_kern_exec_sum", "op_sum"}) {
    const bool names = std::string(report).find("_mem_") == std::string::npos;
    for (const char* format : {"table", "csv"}) {
      Outcome r = run_strata(dir, {"report", file, "--report", report, "--format", format});
      EXPECT_EQ(r.status, 0) << r.err;
      expect_terminal_safe(r, std::string(report) + " " + format, names && format[0] == 'c');
      all_text += r.out;
    }
    Outcome json = run_strata(dir, {"report", file, "--report", report, "--format", "json"});
    if (names) expect_json_exact(json, std::string(report) + " json");
  }
  EXPECT_NE(all_text.find(kEscaped), std::string::npos);
  // The default set, whose stderr names the file (no bench runs or CPU samples).
  Outcome r = run_strata(dir, {"report", file});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_terminal_safe(r, "report", true);
  EXPECT_NE(r.err.find(kEscaped), std::string::npos) << "file name not escaped: " << r.err;
  r = run_strata(dir, {"info", file});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_terminal_safe(r, "info", false);
  EXPECT_NE(r.out.find("trace" + kEscaped + ".sqlite"), std::string::npos) << r.out;
  // The timeline export is JSON: names exact.
  expect_json_exact(run_strata(dir, {"export", file, "--format", "chrome", "-o", "-"}), "chrome",
                    false);
}

TEST(ControlBytes, CpuProfileReportsAndExports) {
  TempDir dir("strata-control-bytes");
  std::string file = hostile_copy(
      dir, "cpu-cpu_hotspot-instrument/trace.sqlite",
      string_ids_sql() + "UPDATE strata_run SET command = json_array('./app' || " + kSqlSuffix +
          ", 'x' || " + kSqlSuffix + "), host = host || " + kSqlSuffix + ";");
  for (const char* format : {"table", "csv"}) {
    Outcome r = run_strata(dir, {"report", file, "--format", format});
    EXPECT_EQ(r.status, 0) << r.err;
    expect_terminal_safe(r, std::string("report ") + format, true);
  }
  expect_json_exact(run_strata(dir, {"report", file, "--format", "json"}), "report json");
  Outcome r = run_strata(dir, {"info", file});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_terminal_safe(r, "info", true);
  // Folded stacks: one stack a line, "frame;frame;... count".
  r = run_strata(dir, {"export", file, "--format", "folded", "-o", "-"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(first_control(r.out), -1) << r.out.substr(0, 400);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    EXPECT_EQ(line.find_first_not_of("0123456789", space + 1), std::string::npos) << line;
  }
  expect_json_exact(run_strata(dir, {"export", file, "--format", "speedscope", "-o", "-"}),
                    "speedscope", false);
}

TEST(ControlBytes, KernelSections) {
  TempDir dir("strata-control-bytes");
  std::string suffix = std::string(" || ") + kSqlSuffix;
  std::string file =
      hostile_copy(dir, "kernels-fake_kernels_target/trace.sqlite",
                   "UPDATE strata_kernel_metrics SET kernel_name = kernel_name" + suffix +
                       "; UPDATE strata_kernels_seen SET kernel_name = "
                       "kernel_name" +
                       suffix + ";");
  for (const char* format : {"table", "csv"}) {
    Outcome r = run_strata(dir, {"report", file, "--report", "kernels", "--format", format});
    EXPECT_EQ(r.status, 0) << r.err;
    expect_terminal_safe(r, std::string("kernels ") + format, true);
  }
  expect_json_exact(run_strata(dir, {"report", file, "--report", "kernels", "--format", "json"}),
                    "kernels json");
}

TEST(ControlBytes, BenchTables) {
  TempDir dir("strata-control-bytes");
  std::string file = hostile_copy(
      dir, "bench-cpu_hotspot/trace.sqlite",
      std::string("UPDATE strata_bench_runs SET command = json_array('./app' || ") + kSqlSuffix +
          "); UPDATE strata_bench_metrics SET name = name || " + kSqlSuffix + ";");
  for (const char* format : {"table", "csv"}) {
    Outcome r = run_strata(dir, {"report", file, "--format", format});
    EXPECT_EQ(r.status, 0) << r.err;
    expect_terminal_safe(r, std::string("bench ") + format, true);
  }
  expect_json_exact(run_strata(dir, {"report", file, "--format", "json"}), "bench json");
}

// Messages that name a file: a read error on a damaged copy, and a usage
// error naming an unknown report.
TEST(ControlBytes, MessagesNamingFilesAndFlags) {
  TempDir dir("strata-control-bytes");
  std::string file = dir.file(kFileName);
  std::ofstream(file, std::ios::binary) << "SQLite format 3";
  Outcome r = run_strata(dir, {"report", file});
  EXPECT_EQ(r.status, 2);
  expect_terminal_safe(r, "report on a damaged file", false);
  EXPECT_NE(r.err.find(kEscaped), std::string::npos) << r.err;
  r = run_strata(dir, {"info", file});
  EXPECT_EQ(r.status, 2);
  expect_terminal_safe(r, "info on a damaged file", false);
  std::string nsys = hostile_copy(dir, "nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite", "");
  r = run_strata(dir, {"report", nsys, "--report", "bad" + kSuffix});
  EXPECT_EQ(r.status, 2);
  expect_terminal_safe(r, "unknown report", false);
}

}  // namespace
}  // namespace strata
