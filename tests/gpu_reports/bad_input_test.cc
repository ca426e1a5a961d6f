// Files without the report's tables, names that could break a terminal or a
// table, and randomly damaged files.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

#include "analysis/gpu_summary.h"
#include "report/gpu_reports.h"
#include "store/trace_db.h"
#include "trace_builder.h"

namespace strata {
namespace {

using report::Format;
using testing::global_pid;
using testing::global_tid;

// Every report of a file, rendered in every format.
std::vector<std::string> all_reports(const store::GpuTables& t) {
  std::vector<report::GpuReport> reports = {
      report::cuda_api_sum_report(analysis::cuda_api_sum(t), t.source),
      report::cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(t), t.source),
      report::cuda_gpu_mem_time_sum_report(analysis::cuda_gpu_mem_time_sum(t), t.source),
      report::cuda_gpu_mem_size_sum_report(analysis::cuda_gpu_mem_size_sum(t), t.source),
      report::nvtx_sum_report(analysis::nvtx_sum(t), t.source),
      report::cuda_kern_exec_sum_report(analysis::cuda_kern_exec_sum(t), t.source),
      report::op_sum_report(analysis::op_table(t), t.source),
  };
  std::vector<std::string> out;
  for (const auto& r : reports) {
    for (Format f : {Format::kTable, Format::kCsv, Format::kJson}) {
      out.push_back(report::render_gpu_report(r, f));
    }
  }
  return out;
}

TEST(AbsentTables, EachReportSaysWhatIsMissing) {
  testing::ScratchDir dir;
  std::string path = dir.file("bare.sqlite");
  { testing::TraceBuilder b(path, testing::kWithStringIds); }
  auto tables = testing::load_file(path);
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  const auto& t = *tables;
  auto skipped = [&](const report::GpuReport& r) { return r.skipped; };
  EXPECT_EQ(skipped(report::cuda_api_sum_report(analysis::cuda_api_sum(t), t.source)),
            "SKIPPED: " + path + " does not contain CUDA trace data.");
  EXPECT_EQ(skipped(report::cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(t), t.source)),
            "SKIPPED: " + path + " does not contain CUDA kernel data.");
  EXPECT_EQ(
      skipped(report::cuda_gpu_mem_time_sum_report(analysis::cuda_gpu_mem_time_sum(t), t.source)),
      "SKIPPED: " + path + " does not contain GPU memory data.");
  EXPECT_EQ(skipped(report::nvtx_sum_report(analysis::nvtx_sum(t), t.source)),
            "SKIPPED: " + path + " does not contain NV Tools Extension (NVTX) data.");

  auto r = report::cuda_api_sum_report(analysis::cuda_api_sum(t), t.source);
  EXPECT_EQ(report::render_gpu_report(r, Format::kTable),
            " ** CUDA API Summary (cuda_api_sum):\n\nSKIPPED: " + path +
                " does not contain CUDA trace data.\n");
  EXPECT_EQ(report::render_gpu_report(r, Format::kJson), "[]\n");
  EXPECT_EQ(report::render_gpu_report(r, Format::kCsv).find('\n'),
            report::render_gpu_report(r, Format::kCsv).size() - 1);

  // No StringIds at all: nsys's first check.
  std::string empty = dir.file("nothing.sqlite");
  { testing::TraceBuilder b(empty, 0); }
  auto none = testing::load_file(empty);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(analysis::cuda_api_sum(*none).missing, "file does not contain StringIds table.");
  for (const auto& text : all_reports(*none)) EXPECT_FALSE(text.empty());
}

TEST(AbsentTables, EmptyTablesGiveEmptyReports) {
  testing::ScratchDir dir;
  std::string path = dir.file("empty.sqlite");
  { testing::TraceBuilder b(path, testing::kWithEverything); }
  auto tables = testing::load_file(path);
  ASSERT_TRUE(tables.ok());
  auto s = analysis::cuda_gpu_kern_sum(*tables);
  EXPECT_TRUE(s.missing.empty());
  EXPECT_TRUE(s.rows.empty());
  for (const auto& text : all_reports(*tables)) EXPECT_FALSE(text.empty());
}

TEST(AbsentColumns, OlderExportsLoadAndMissingRequiredColumnsAreNamed) {
  testing::ScratchDir dir;
  std::string path = dir.file("old.sqlite");
  {
    testing::TraceBuilder b(path, testing::kWithStringIds);
    // An older kernel table: no mangledName, no globalPid, no correlationId.
    b.exec(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT "
        "NULL, deviceId INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL)");
    b.exec("INSERT INTO StringIds VALUES (1, 'k')");
    b.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 1, 1), (5, 25, 0, 1, 1)");
    b.exec("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER)");
    b.commit();
  }
  store::GpuLoadOptions kernels_only;
  kernels_only.tables = store::kKernelTable;
  kernels_only.kernel_names = store::KernelNameKind::kMangled;
  auto tables = testing::load_file(path, kernels_only);
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  auto s = analysis::cuda_gpu_kern_sum(*tables);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].name, "k");
  EXPECT_EQ(s.rows[0].stats.total, 30);

  auto all = testing::load_file(path);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().message, path + ": table CUPTI_ACTIVITY_KIND_RUNTIME has no column nameId");
}

TEST(Names, ControlBytesLongAndMarkupNamesPrintSafely) {
  testing::ScratchDir dir;
  std::string path = dir.file("names.sqlite");
  const std::string control = std::string("bad\x01name\x1b[31mred\n", 17);
  const std::string long_name = "void k<" + std::string(10'000 - 8, 'x') + ">";
  const std::string markup = "<script>alert(\"&'\")</script>,\"quoted\"";
  {
    testing::TraceBuilder b(path, testing::kWithEverything);
    int64_t p = global_pid(1);
    b.kernel(0, 10, p, 1, control);
    b.kernel(0, 20, p, 2, long_name);
    b.kernel(0, 30, p, 3, markup);
    b.nvtx(0, 100, 59, global_tid(1, 2), long_name);
    b.commit();
  }
  ASSERT_EQ(long_name.size(), 10'000u);
  auto tables = testing::load_file(path);
  ASSERT_TRUE(tables.ok());
  auto r = report::cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(*tables), path);

  std::string table = report::render_gpu_report(r, Format::kTable);
  EXPECT_EQ(table.find('\x01'), std::string::npos);
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
  EXPECT_NE(table.find("bad\\x01name\\x1b[31mred\\x0a"), std::string::npos) << table;
  // nsys's table cuts at 100 characters: 99 and an ellipsis.
  EXPECT_NE(table.find("void k<" + std::string(92, 'x') + "…\n"), std::string::npos);
  size_t lines = 0;
  for (size_t at = 0, next; at < table.size(); at = next + 1, ++lines) {
    next = table.find('\n', at);
    EXPECT_LT(next - at, 300u) << "a table line grew with the long name";
  }
  EXPECT_EQ(lines, 7u);  // title, blank, header, rule, three rows

  // CSV and JSON keep every name whole.
  std::string csv = report::render_gpu_report(
      report::cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(*tables), path,
                                       {Format::kCsv, false}),
      Format::kCsv);
  EXPECT_NE(csv.find("," + long_name + "\n"), std::string::npos);
  EXPECT_NE(csv.find(",\"<script>alert(\"\"&'\"\")</script>,\"\"quoted\"\"\"\n"), std::string::npos)
      << csv;
  auto json = nlohmann::json::parse(report::render_gpu_report(
      report::cuda_gpu_kern_sum_report(analysis::cuda_gpu_kern_sum(*tables), path,
                                       {Format::kJson, false}),
      Format::kJson));
  ASSERT_EQ(json.size(), 3u);
  EXPECT_EQ(json[1]["Name"].get<std::string>(), long_name);
  EXPECT_EQ(json[2]["Name"].get<std::string>(), control);
  EXPECT_EQ(json[0]["Name"].get<std::string>(), markup);
  EXPECT_EQ(json[0]["Total Time (ns)"].get<double>(), 30.0);

  // The op table cuts names as torch does: 52 characters and "...".
  auto ops = report::op_sum_report(analysis::op_table(*tables), path);
  ASSERT_EQ(ops.table.rows.size(), 1u);
  EXPECT_EQ(ops.table.rows[0][0].text, "void k<" + std::string(45, 'x') + "...");
}

TEST(FitName, NeverSplitsAnEscapeOrACharacter) {
  EXPECT_EQ(report::fit_name("abc", 5, "…"), "abc");
  EXPECT_EQ(report::fit_name("abcdef", 5, "…"), "abcd…");
  EXPECT_EQ(report::fit_name("ab\x01zzzz", 5, "…"), "ab…");
  EXPECT_EQ(report::fit_name("ééééééé", 5, "..."), "éé...");
}

// Random damage to a small complete file: loading gives an error or data,
// and every report of the data renders; nothing crashes. The seed is printed
// and can be set with STRATA_MUTATION_SEED to replay a failure.
TEST(Mutation, DamagedFilesLoadOrFailCleanly) {
  testing::ScratchDir dir;
  std::string original_path = dir.file("original.sqlite");
  {
    testing::TraceBuilder b(original_path, testing::kWithEverything);
    int64_t t = global_tid(3, 4), p = global_pid(3);
    for (int i = 0; i < 200; ++i) {
      std::string name = "kernel_" + std::to_string(i % 13);
      b.runtime(i * 1000, i * 1000 + 50, t, i, "cudaLaunchKernel");
      b.kernel(i * 1000 + 60, i * 1000 + 300 + i, p, i, name);
      if (i % 10 == 0) b.memcpy(i * 1000, i * 1000 + 40, 4096 * i, 1 + i % 2);
      if (i % 25 == 0) b.memset(i * 1000, i * 1000 + 5, 64);
      b.nvtx(i * 1000, i * 1000 + 700, 59, t, "step " + std::to_string(i % 3));
    }
    b.commit();
  }
  std::ifstream in(original_path, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(original.size(), 8192u);

  uint64_t seed = 20261201;
  if (const char* env = std::getenv("STRATA_MUTATION_SEED")) seed = std::strtoull(env, nullptr, 10);
  std::cout << "mutation seed " << seed << " (STRATA_MUTATION_SEED replays it)\n";
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::string path = dir.file("mutant.sqlite");
  int loaded = 0, refused = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int i = 0; i < 200; ++i) {
    std::string bytes = original;
    // Past the first page the damage lands in table and index pages, where
    // the readers (not the header check) must cope.
    int flips = 1 + static_cast<int>(pick(16));
    for (int f = 0; f < flips; ++f) {
      size_t at = i % 4 == 0 ? pick(bytes.size()) : 100 + pick(bytes.size() - 100);
      bytes[at] = static_cast<char>(i % 2 ? pick(256) : bytes[at] ^ (1 << pick(8)));
    }
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << bytes;
    }
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " mutation " << i);
    auto reader = store::TraceReader::open(path);
    if (!reader.ok()) {
      ++refused;
      continue;
    }
    auto tables = store::load_gpu_tables(reader->handle(), path);
    if (!tables.ok()) {
      ++refused;
      EXPECT_EQ(tables.error().message.find('\n'), std::string::npos);
      EXPECT_EQ(tables.error().message.rfind(path + ": ", 0), 0u) << tables.error().message;
      continue;
    }
    ++loaded;
    for (const auto& text : all_reports(*tables)) EXPECT_FALSE(text.empty());
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "mutation test is too slow";
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace strata
