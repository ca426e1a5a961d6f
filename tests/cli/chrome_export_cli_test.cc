// `strata export FILE --format chrome` end to end on the recorded captures
// (tests/data/README.md): a strata trace and an Nsight Systems export of the
// same program. Each output is checked against the trace database itself
// (slices per track = rows per thread and per stream, one arrow per launched
// kernel or copy, every track properly nested, names from ThreadNames) and
// against a golden summary in tests/cli/golden/: a digest of the canonical
// JSON plus the per-track facts a reviewer can read. The full JSON (hundreds
// of KB) is not committed.
//
// Regenerate the goldens only on purpose, and review the diff:
//   STRATA_UPDATE_GOLDEN=1 ctest --test-dir BUILD -R ChromeExport
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <tuple>

#include "cli_runner.h"

namespace strata::testing {
namespace {

using Json = nlohmann::json;

const std::string kGoldenDir = STRATA_TEST_DATA "/../cli/golden";

struct Fixture {
  const char* name;  // golden file stem
  const char* path;  // under tests/data
};

// For readable test names in ctest's listing.
void PrintTo(const Fixture& f, std::ostream* os) {
  *os << f.name;
}

const Fixture kFixtures[] = {
    {"trace-gpu_matmul-slow_loop_sync", "trace-gpu_matmul-slow_loop_sync/trace.sqlite"},
    {"nsys-gpu_matmul-slow", "nsys-gpu_matmul-slow/gpu_matmul_slow.sqlite"},
};

// Integer rows of a query on the fixture, each row as a vector.
std::vector<std::vector<int64_t>> query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::vector<int64_t>> rows;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path;
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  } else {
    while (sqlite3_step(s) == SQLITE_ROW) {
      std::vector<int64_t> row;
      for (int i = 0; i < sqlite3_column_count(s); ++i) row.push_back(sqlite3_column_int64(s, i));
      rows.push_back(std::move(row));
    }
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return rows;
}

int64_t ns(const Json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

uint64_t fnv1a64(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// What one export holds, by (pid, tid).
struct Track {
  std::string name;
  int64_t sort_index = -1;
  std::vector<const Json*> slices;
  std::map<std::string, int> by_cat;
};

struct Parsed {
  Json doc;
  std::map<std::pair<int64_t, int64_t>, Track> tracks;
  std::map<int64_t, std::string> processes;
  std::map<std::string, int> by_phase;
};

Parsed parse(const std::string& text) {
  Parsed p;
  p.doc = Json::parse(text);
  for (const auto& e : p.doc["traceEvents"]) {
    // Required fields (Trace Event Format): name, ph, pid everywhere; ts and
    // tid on events; dur on complete events.
    EXPECT_TRUE(e.contains("name") && e.contains("ph") && e.contains("pid")) << e;
    std::string ph = e["ph"];
    ++p.by_phase[ph];
    if (ph == "M") {
      if (e["name"] == "process_name") p.processes[e["pid"]] = e["args"]["name"];
      if (e["name"] == "thread_name") p.tracks[{e["pid"], e["tid"]}].name = e["args"]["name"];
      if (e["name"] == "thread_sort_index") {
        p.tracks[{e["pid"], e["tid"]}].sort_index = e["args"]["sort_index"];
      }
      continue;
    }
    EXPECT_TRUE(e["ts"].is_number() && e["tid"].is_number_integer()) << e;
    if (ph == "X") {
      EXPECT_TRUE(e["dur"].is_number() && e["cat"].is_string()) << e;
      auto& t = p.tracks[{e["pid"], e["tid"]}];
      t.slices.push_back(&e);
      ++t.by_cat[e["cat"]];
    }
  }
  return p;
}

std::string summary(const Fixture& f, const Parsed& p) {
  Json canonical = p.doc;
  canonical["otherData"].erase("exporter");  // the version changes; the timeline does not
  std::string out = fmt::format(
      "# strata export --format chrome of tests/data/{}\n"
      "# Regenerate only on purpose (STRATA_UPDATE_GOLDEN=1 ctest -R ChromeExport), and review.\n"
      "digest fnv1a64 {:016x} of the canonical JSON (keys sorted, otherData.exporter dropped)\n",
      f.path, fnv1a64(canonical.dump()));
  out += "events";
  for (const auto& [ph, n] : p.by_phase) out += fmt::format(" {} {}", ph, n);
  out += "\n";
  for (const auto& [pid, name] : p.processes) out += fmt::format("process {} {}\n", pid, name);
  for (const auto& [key, t] : p.tracks) {
    out += fmt::format("track {}/{} sort {} \"{}\":", key.first, key.second, t.sort_index, t.name);
    for (const auto& [cat, n] : t.by_cat) out += fmt::format(" {} {}", cat, n);
    out += "\n";
    if (!t.slices.empty()) {
      out += "  first " + t.slices.front()->dump() + "\n";
      out += "  last  " + t.slices.back()->dump() + "\n";
    }
  }
  out += "otherData " + canonical["otherData"].dump() + "\n";
  return out;
}

// Any two slices of one track are disjoint or nested, in integer ns.
void expect_nested(const Parsed& p) {
  for (const auto& [key, t] : p.tracks) {
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const Json* e : t.slices) {
      int64_t start = ns((*e)["ts"]);
      spans.push_back({start, start + ns((*e)["dur"])});
    }
    std::sort(spans.begin(), spans.end(), [](auto a, auto b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<int64_t> open;
    for (auto [start, end] : spans) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      EXPECT_TRUE(open.empty() || end <= open.back())
          << t.name << ": slice at " << start << " ns overlaps its parent partially";
      open.push_back(end);
    }
  }
}

class ChromeExport : public ::testing::TestWithParam<Fixture> {};

TEST_P(ChromeExport, MatchesTheDatabaseAndTheGolden) {
  const Fixture& f = GetParam();
  const std::string db = std::string(STRATA_TEST_DATA) + "/" + f.path;
  ScratchDir dir;
  auto r = run_strata("export '" + db + "' --format chrome -o trace.json", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  Parsed p = parse(read_file(dir.path() / "trace.json"));

  // Slices per GPU stream = the DB's kernels and copies on that stream.
  std::map<std::string, int64_t> want_gpu;
  for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY"}) {
    for (const auto& row : query(db, fmt::format("SELECT deviceId, streamId, count(*) FROM {} "
                                                 "GROUP BY 1, 2",
                                                 table))) {
      want_gpu[fmt::format("GPU {} stream {}", row[0], row[1])] += row[2];
    }
  }
  auto kernels = query(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0];
  ASSERT_GT(kernels, 0);
  std::map<std::string, int64_t> got_gpu;
  int64_t got_kernels = 0;
  for (const auto& [key, t] : p.tracks) {
    if (t.name.rfind("GPU ", 0) == 0) got_gpu[t.name] += static_cast<int64_t>(t.slices.size());
    got_kernels += t.by_cat.count("cuda_kernel") ? t.by_cat.at("cuda_kernel") : 0;
  }
  EXPECT_EQ(got_gpu, want_gpu);
  EXPECT_EQ(got_kernels, kernels);

  // API calls on their thread's real tid, named from ThreadNames.
  for (const auto& row : query(db,
                               "SELECT globalTid, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                               "GROUP BY 1")) {
    int64_t pid = (row[0] >> 24) & 0xFFFFFF;
    int64_t tid = row[0] & 0xFFFFFF;
    auto it = p.tracks.find({pid, tid});
    ASSERT_NE(it, p.tracks.end()) << "no track for tid " << tid;
    EXPECT_EQ(static_cast<int64_t>(it->second.slices.size()), row[1]);
    EXPECT_EQ(it->second.name, "gpu_matmul");
    EXPECT_EQ(p.processes[pid], "gpu_matmul");
  }
  // NVTX ranges on their own track.
  auto ranges = query(db, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59")[0][0];
  int64_t got_ranges = 0;
  for (const auto& [key, t] : p.tracks) {
    got_ranges += t.by_cat.count("nvtx") ? t.by_cat.at("nvtx") : 0;
  }
  EXPECT_EQ(got_ranges, ranges);

  // GPU streams sort after every CPU track of the process.
  int64_t last_cpu = -1, first_gpu = INT64_MAX;
  for (const auto& [key, t] : p.tracks) {
    if (t.name.rfind("GPU ", 0) == 0) {
      first_gpu = std::min(first_gpu, t.sort_index);
    } else {
      last_cpu = std::max(last_cpu, t.sort_index);
    }
  }
  EXPECT_LT(last_cpu, first_gpu);

  // One arrow per kernel or copy that has a launch call in its process;
  // every "s" has exactly one "f" and the reverse.
  int64_t launched = 0;
  for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY"}) {
    launched +=
        query(db, fmt::format("SELECT count(*) FROM {} k WHERE EXISTS (SELECT 1 FROM "
                              "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = "
                              "k.correlationId AND (r.globalTid & ~0xFFFFFF) = k.globalPid)",
                              table))[0][0];
  }
  EXPECT_EQ(launched, kernels + 3);  // every kernel and the 3 copies are launched
  std::map<int64_t, int> starts, ends;
  for (const auto& e : p.doc["traceEvents"]) {
    if (e["ph"] == "s") ++starts[e["id"]];
    if (e["ph"] == "f") ++ends[e["id"]];
  }
  EXPECT_EQ(static_cast<int64_t>(starts.size()), launched);
  EXPECT_EQ(starts, ends);
  for (const auto& [id, n] : starts) EXPECT_EQ(n, 1) << "flow id " << id;
  EXPECT_EQ(p.doc["otherData"]["flows"], launched);
  EXPECT_EQ(p.doc["otherData"]["overlap_slices"], 0);

  expect_nested(p);

  const std::string golden_path = kGoldenDir + "/chrome-" + f.name + ".txt";
  std::string got = summary(f, p);
  const char* update = std::getenv("STRATA_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary | std::ios::trunc) << got;
    std::fprintf(stderr, "updated %s: review the diff\n", golden_path.c_str());
    return;
  }
  EXPECT_EQ(got, read_file(golden_path))
      << "the export changed; if on purpose, rerun with STRATA_UPDATE_GOLDEN=1 and review";
}

INSTANTIATE_TEST_SUITE_P(Recorded, ChromeExport, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(ChromeExportCli, WritesToStdout) {
  ScratchDir dir;
  auto r = run_strata("export '" STRATA_TEST_DATA
                      "/trace-gpu_matmul-slow_loop_sync/trace.sqlite' --format chrome -o -",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["otherData"]["source"], "trace.sqlite");  // the file name, not its path
  EXPECT_EQ(doc["otherData"]["exporter"].get<std::string>().rfind("strata ", 0), 0u);
}

TEST(ChromeExportCli, TraceWithoutCudaDataIsAUsageError) {
  ScratchDir dir;
  ASSERT_EQ(run_strata("bench -n 1 --warmup 0 -q -o b.sqlite -- true", dir.path()).status, 0);
  auto r = run_strata("export b.sqlite --format chrome -o t.json", dir.path());
  EXPECT_EQ(r.status, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_EQ(r.err_lines()[0],
            "strata: b.sqlite: no CUDA, NVTX or PyTorch trace data to export (record a GPU "
            "timeline with strata trace)");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "t.json"));

  // An Nsight Systems export without any CUDA table says the same.
  std::string path = (dir.path() / "n.sqlite").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
                         "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto n = run_strata("export n.sqlite --format chrome -o t.json", dir.path());
  EXPECT_EQ(n.status, 2) << n.err;
  EXPECT_EQ(n.err_lines().size(), 1u) << n.err;
  EXPECT_NE(n.err.find("no CUDA, NVTX or PyTorch trace data"), std::string::npos) << n.err;
}

}  // namespace
}  // namespace strata::testing
