// `strata info` end to end: the built binary on good and bad files. Bad input
// must give exit status 2 and exactly one stderr line starting "strata: ".
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "common/strings.h"
#include "test_util.h"

namespace strata::store {
namespace {

using testing::TempDir;

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

Outcome run_info(const TempDir& dir, const std::string& file) {
  std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  std::string command = shell_quote(STRATA_BINARY) + " info " + shell_quote(file) + " >" +
                        shell_quote(out) + " 2>" + shell_quote(err);
  int rc = std::system(command.c_str());
  Outcome outcome;
  outcome.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  outcome.out = testing::read_bytes(out);
  outcome.err = testing::read_bytes(err);
  return outcome;
}

void expect_one_line_error(const Outcome& outcome, const std::string& text) {
  EXPECT_EQ(outcome.status, 2);
  EXPECT_TRUE(outcome.out.empty()) << outcome.out;
  EXPECT_EQ(outcome.err, "strata: " + text + "\n");
}

TEST(InfoCli, PrintsAStrataTrace) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 50);
  Outcome outcome = run_info(dir, path);
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_TRUE(outcome.err.empty()) << outcome.err;
  for (const char* text :
       {"kind:       strata trace, schema version 2", "verb:       bench",
        "command:    ./app --size '1 024'", "directory:  /work/dir with space", "(2.500 s)",
        "outcome:    exit status 0", "host:       testhost", "strata:     0.1.0",
        "CUPTI_ACTIVITY_KIND_KERNEL            50", "empty: "}) {
    EXPECT_NE(outcome.out.find(text), std::string::npos) << text << "\n" << outcome.out;
  }
}

TEST(InfoCli, PrintsAnNsysExport) {
  TempDir dir;
  std::string path = dir.file("report1.sqlite");
  testing::make_sqlite(path, testing::read_bytes(STRATA_NSYS_SCHEMA_SQL) +
                                 "INSERT INTO META_DATA_EXPORT VALUES "
                                 "('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'), "
                                 "('EXPORT_PRODUCT_VERSION', '2025.3.2'), "
                                 "('EXPORT_SCHEMA_VERSION', '3.20.3');");
  Outcome outcome = run_info(dir, path);
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("Nsight Systems export, export schema 3.20.3"), std::string::npos)
      << outcome.out;
  EXPECT_NE(outcome.out.find("exported:   NVIDIA Nsight Systems 2025.3.2"), std::string::npos)
      << outcome.out;
  EXPECT_NE(outcome.out.find("META_DATA_EXPORT"), std::string::npos);
}

TEST(InfoCli, MissingFile) {
  TempDir dir;
  std::string path = dir.file("absent.sqlite");
  expect_one_line_error(run_info(dir, path), path + ": no such file");
}

TEST(InfoCli, NotSqlite) {
  TempDir dir;
  std::string path = dir.file("x.sqlite");
  testing::write_bytes(path, "hello\n");
  expect_one_line_error(run_info(dir, path), path + ": not an SQLite database");
}

TEST(InfoCli, Truncated) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 2000);
  std::string bytes = testing::read_bytes(path);
  testing::write_bytes(path, bytes.substr(0, bytes.size() / 2));
  Outcome outcome = run_info(dir, path);
  EXPECT_EQ(outcome.status, 2);
  EXPECT_EQ(outcome.err.rfind("strata: " + path + ": truncated SQLite database", 0), 0u)
      << outcome.err;
  EXPECT_EQ(outcome.err.find('\n'), outcome.err.size() - 1);
}

TEST(InfoCli, NewerSchema) {
  TempDir dir;
  std::string path = dir.file("t.sqlite");
  testing::write_sample_trace(path, 1);
  testing::make_sqlite(path, "UPDATE strata_run SET schema_version = 9");
  expect_one_line_error(run_info(dir, path),
                        path + ": strata schema version 9 is newer than this strata reads (2)");
}

TEST(InfoCli, NotATrace) {
  TempDir dir;
  std::string path = dir.file("o.sqlite");
  testing::make_sqlite(path, "CREATE TABLE t (x INTEGER);");
  expect_one_line_error(run_info(dir, path),
                        path + ": not a strata trace or Nsight Systems export");
}

TEST(InfoCli, MissingArgumentIsAUsageError) {
  TempDir dir;
  std::string err = dir.file("stderr.txt");
  std::string command = shell_quote(STRATA_BINARY) + " info 2>" + shell_quote(err) + " >/dev/null";
  int rc = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
}

}  // namespace
}  // namespace strata::store
