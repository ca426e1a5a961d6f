// Idle-spinning threads end to end (issue 20 item 7, docs/cli.md --idle):
// real programs whose thread pools wait (OpenMP at a barrier, a condition
// variable pool, a sched_yield loop; torch 1.13's OpenMP pool; numpy on
// OpenBLAS's pthread build) are profiled; the table leaves the idle samples
// out and the header says how much time they took, --idle lists them,
// --threads says which threads idled in what.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace strata::testing {
namespace {

bool perf_events_refused(const ScratchDir& dir, std::string* why) {
  auto r = run_strata("cpu -o probe.sqlite -- true", dir.path());
  std::filesystem::remove(dir.path() / "probe.sqlite");
  *why = r.err;
  return r.status != 0 && r.err.find("perf_event") != std::string::npos;
}

nlohmann::json report_json(const ScratchDir& dir, const std::string& extra) {
  auto r = run_strata("report t.sqlite --format json " + extra, dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  // One document keyed by report name (docs/reports.md): the CPU profile is "cpu".
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  return doc.is_object() && doc.contains("cpu") ? doc["cpu"] : nlohmann::json();
}

bool any_label_has(const nlohmann::json& doc, const std::string& part) {
  for (const auto& row : doc["functions"]) {
    if (row["filename:lineno(function)"].get<std::string>().find(part) != std::string::npos)
      return true;
  }
  return false;
}

double idle_time_of(const nlohmann::json& header, const std::string& what_part) {
  double s = 0;
  for (const auto& by : header["idle_by"]) {
    if (by["what"].get<std::string>().find(what_part) != std::string::npos)
      s += by["time_s"].get<double>();
  }
  return s;
}

TEST(IdleCli, OpenMPWorkersAtABarrierAreIdleAndLeftOut) {
  ScratchDir dir;
  std::string why;
  if (perf_events_refused(dir, &why)) GTEST_SKIP() << "perf_event_open refused here: " << why;
  auto r = run_strata(
      "cpu -o t.sqlite --sort tottime --limit 3 -- env OMP_WAIT_POLICY=active " IDLE_POOL_TARGET
      " 60",
      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("idle-spinning threads:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OpenMP runtime (libgomp) spinning or waiting"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left out of the table; --idle lists them"), std::string::npos) << r.out;

  nlohmann::json doc = report_json(dir, "--sort tottime");
  ASSERT_FALSE(doc.is_discarded());
  const nlohmann::json& h = doc["header"];
  EXPECT_FALSE(h["idle_shown"].get<bool>());
  EXPECT_GT(h["idle_samples"].get<int>(), 0);
  // The worker spins while thread 0 runs heavy(): its idle time is a good
  // part of heavy's (both threads share the machine's cores).
  EXPECT_GT(idle_time_of(h, "libgomp"), 0.0);
  EXPECT_GT(h["idle_share"].get<double>(), 0.05) << h.dump();
  EXPECT_LE(h["idle_share"].get<double>(), 1.0);
  ASSERT_FALSE(doc["functions"].empty());
  EXPECT_NE(doc["functions"][0]["filename:lineno(function)"].get<std::string>().find("heavy"),
            std::string::npos)
      << doc["functions"].dump();
  EXPECT_FALSE(any_label_has(doc, "libgomp")) << doc["functions"].dump();

  nlohmann::json shown = report_json(dir, "--sort tottime --idle");
  EXPECT_TRUE(shown["header"]["idle_shown"].get<bool>());
  EXPECT_TRUE(any_label_has(shown, "libgomp")) << shown["functions"].dump();
  EXPECT_EQ(shown["header"]["idle_samples"], h["idle_samples"]);
  EXPECT_EQ(shown["header"]["samples"], h["samples"]);

  nlohmann::json threads = report_json(dir, "--threads");
  double idle_s = 0;
  bool named = false;
  for (const auto& t : threads["threads"]) {
    idle_s += t["Idle (s)"].get<double>();
    named = named || t["Idle in"].get<std::string>().find("libgomp") != std::string::npos;
    EXPECT_LE(t["Idle (s)"].get<double>(), t["Time (s)"].get<double>() + 1e-9);
  }
  EXPECT_TRUE(named) << threads["threads"].dump();
  EXPECT_NEAR(idle_s, h["idle_s"].get<double>(), 1e-6);
  // Per-thread rows leave idle samples out too.
  EXPECT_FALSE(any_label_has(threads, "libgomp"));
}

// Debian's python3 with torch 1.13 (python3-torch in scripts/install-deps):
// its intra-op pool is libgomp's; elementwise ops on a large tensor run on
// both threads, the workers spin between ops while Python runs.
TEST(IdleCli, TorchIntraOpPoolIsIdleBetweenOps) {
  const char* python = "/usr/bin/python3";
  if (access(python, X_OK) != 0) GTEST_SKIP() << "no " << python;
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "Debian's python3 has no torch (python3-torch)";
  ScratchDir dir;
  std::string why;
  if (perf_events_refused(dir, &why)) GTEST_SKIP() << "perf_event_open refused here: " << why;
  std::ofstream(dir.path() / "ops.py") << "import torch\n"
                                          "torch.set_num_threads(2)\n"
                                          "x = torch.rand(1 << 20)\n"
                                          "a = torch.rand(256, 256)\n"
                                          "for i in range(60):\n"
                                          "    y = x.sin()\n"
                                          "    c = a @ a\n"
                                          "    s = sum(range(2000))\n";
  auto r = run_strata("cpu -o t.sqlite --limit 5 -- " + std::string(python) + " ops.py",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json doc = report_json(dir, "--sort tottime");
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_GT(idle_time_of(doc["header"], "libgomp"), 0.0) << doc["header"].dump();
  EXPECT_FALSE(any_label_has(doc, "libgomp.so")) << doc["functions"].dump();
  EXPECT_TRUE(any_label_has(report_json(dir, "--idle"), "libgomp.so"));
}

// numpy on OpenBLAS's pthread build: its blas_thread_server yields between
// matrix products (measured on the dev machine with Debian's 0.3.21: 3 % of
// the time, in sched_yield, on both threads). Debian's numpy uses whichever libblas.so.3 is installed;
// OpenBLAS's is looked for where libopenblas0-pthread puts it (or in
// STRATA_OPENBLAS_DIR) and put first on LD_LIBRARY_PATH.
TEST(IdleCli, OpenBLASThreadServerIsIdleBetweenProducts) {
  const char* python = "/usr/bin/python3";
  if (access(python, X_OK) != 0) GTEST_SKIP() << "no " << python;
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "Debian's python3 has no numpy (python3-numpy)";
  const char* env_dir = std::getenv("STRATA_OPENBLAS_DIR");
  std::string openblas = env_dir ? env_dir : "/usr/lib/x86_64-linux-gnu/openblas-pthread";
  if (!std::filesystem::exists(openblas + "/libblas.so.3"))
    GTEST_SKIP() << "no OpenBLAS pthread build in " << openblas
                 << " (libopenblas0-pthread, or STRATA_OPENBLAS_DIR)";
  ScratchDir dir;
  std::string why;
  if (perf_events_refused(dir, &why)) GTEST_SKIP() << "perf_event_open refused here: " << why;
  std::ofstream(dir.path() / "mm.py") << "import numpy as np\n"
                                         "a = np.random.rand(300, 300)\n"
                                         "for i in range(60):\n"
                                         "    c = a @ a\n"
                                         "    s = sum(range(30000))\n";
  auto r = run_strata("cpu -o t.sqlite --limit 5 -- env OPENBLAS_NUM_THREADS=2 LD_LIBRARY_PATH='" +
                          openblas + "' " + python + " mm.py",
                      dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json doc = report_json(dir, "--sort tottime");
  ASSERT_FALSE(doc.is_discarded());
  // Debian's 0.3.21 yields (sched_yield) in its server loop: most idle
  // samples land there, the rest in the loop's own code.
  EXPECT_GT(idle_time_of(doc["header"], "OpenBLAS thread server") +
                idle_time_of(doc["header"], "sched_yield loop"),
            0.0)
      << doc["header"].dump();
}

}  // namespace
}  // namespace strata::testing
