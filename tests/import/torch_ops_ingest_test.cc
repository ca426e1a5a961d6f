// import::ingest_torch_spools on spools written with format::SpoolWriter as
// libstrata_torch writes them: rows, string ids, clocks, threads, the status
// lines the CLI prints, the python-notorch markers, and damage counted.
#include "import/torch_ops_ingest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/global_id.h"
#include "format/spool_writer.h"
#include "store/torch_op_rows.h"
#include "torch_spool_builder.h"
#include "util/temp_dir.h"

namespace strata::import {
namespace {

using format::ChunkKind;
using test_util::torch_op;
using test_util::torch_ops_payload;
using test_util::torch_status_payload;

class TorchIngestTest : public ::testing::Test {
 protected:
  format::SpoolWriter spool(const std::string& name) {
    auto w = format::SpoolWriter::open(dir_.file(name));
    EXPECT_TRUE(w) << (w ? "" : w.error().message);
    return std::move(w).value();
  }
  void strings(format::SpoolWriter& w, const std::vector<std::pair<uint64_t, std::string>>& s) {
    std::vector<format::StringEntry> entries;
    for (const auto& [id, text] : s) entries.push_back({id, text});
    ASSERT_TRUE(w.append_strings(entries));
  }
  void ops(format::SpoolWriter& w, const test_util::TorchOpsPrefix& prefix,
           const std::vector<format::TorchOpRecord>& records) {
    auto b = torch_ops_payload(prefix, records);
    ASSERT_TRUE(w.append(ChunkKind::kTorchOps, b.data(), b.size()));
  }
  void status(format::SpoolWriter& w, uint32_t s, const std::string& text) {
    auto b = torch_status_payload(s, text);
    ASSERT_TRUE(w.append(ChunkKind::kTorchStatus, b.data(), b.size()));
  }
  // Ingests the run directory into a fresh trace and reads it back.
  TorchIngestSummary ingest() {
    auto writer = store::TraceWriter::create(dir_.file("t.sqlite"), true);
    EXPECT_TRUE(writer) << (writer ? "" : writer.error().message);
    auto summary = ingest_torch_spools(dir_.path().string(), *writer);
    EXPECT_TRUE(summary) << (summary ? "" : summary.error().message);
    EXPECT_TRUE(writer->commit());
    auto reader = store::TraceReader::open(dir_.file("t.sqlite"));
    EXPECT_TRUE(reader);
    auto loaded = store::load_torch_op_rows(*reader);
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().message);
    rows_ = std::move(loaded).value();
    auto counters = reader->counters();
    counters_.clear();
    for (const auto& [name, value] : *counters) counters_[name] = value;
    auto present = store::torch_ops_present(*reader);
    present_ = present && *present;
    return summary ? *summary : TorchIngestSummary{};
  }

  test_util::TempDir dir_{"strata-torch-ingest"};
  store::TorchOpRows rows_;
  std::map<std::string, int64_t> counters_;
  bool present_ = false;
};

TEST_F(TorchIngestTest, OpsBecomeRowsWithTheTracesStringsAndThreads) {
  const int pid = getpid();
  {
    auto w = spool("torch-" + std::to_string(pid) + ".bin");
    strings(w, {{1, "aten::mm"}, {2, "[[8, 16], [16, 4]]"}, {3, "train.py(12): step"}});
    status(w, 1, "recorded by a RecordFunction callback (torch 1.13.1)");
    format::TorchOpRecord mm = torch_op(1000, 2000, 1, 17, 5);
    mm.shapes_id = 2;
    mm.stack_id = 3;
    mm.depth = 1;
    mm.scope = 1;
    ops(w, {11}, {mm, torch_op(3000, 3500, 1)});
    ops(w, {12}, {torch_op(4000, 4100, 1)});
  }
  TorchIngestSummary s = ingest();
  EXPECT_TRUE(present_);
  EXPECT_EQ(s.ops, 3u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_EQ(s.processes, 1u);
  ASSERT_EQ(rows_.ops.size(), 3u);
  const store::TorchOp& op = rows_.ops[0];
  EXPECT_EQ(op.name, "aten::mm");
  EXPECT_EQ(op.start, 1000);
  EXPECT_EQ(op.end, 2000);
  EXPECT_EQ(op.global_tid, global_id::make_tid(pid, 11));
  EXPECT_EQ(op.external_id, 17);
  EXPECT_EQ(op.seq, 5);
  EXPECT_EQ(op.scope, 1);
  EXPECT_EQ(op.shapes, "[[8, 16], [16, 4]]");
  EXPECT_EQ(op.stack, "train.py(12): step");
  EXPECT_FALSE(rows_.ops[1].shapes);  // id 0: not recorded
  EXPECT_EQ(rows_.ops[2].global_tid, global_id::make_tid(pid, 12));
  ASSERT_EQ(rows_.statuses.size(), 1u);
  EXPECT_EQ(rows_.statuses[0].global_pid, global_id::make_pid(pid));
  ASSERT_EQ(s.lines.size(), 1u);
  EXPECT_EQ(s.lines[0],
            "recorded by a RecordFunction callback (torch 1.13.1) \u2014 3 ops on 2 threads in 1 "
            "process");
}

TEST_F(TorchIngestTest, TscStampsUseTheSpoolsWidestClockPair) {
  {
    auto w = spool("torch-1.bin");
    strings(w, {{1, "op"}});
    // 2 ticks per ns. The first chunk's pair is narrow (and a bit off); the
    // last one's spans the run and wins for every chunk.
    ops(w, {1, format::InstrumentClock::kTsc, 1000, 10000, 1100, 10210},
        {torch_op(10000, 12000, 1)});
    ops(w, {1, format::InstrumentClock::kTsc, 1000, 10000, 101000, 210000},
        {torch_op(14000, 16000, 1)});
  }
  ingest();
  ASSERT_EQ(rows_.ops.size(), 2u);
  EXPECT_EQ(rows_.ops[0].start, 1000);
  EXPECT_EQ(rows_.ops[0].end, 2000);
  EXPECT_EQ(rows_.ops[1].start, 3000);
  EXPECT_EQ(rows_.ops[1].end, 4000);
}

TEST_F(TorchIngestTest, StatusLinesOncePerTextAndTheRecordingOneCounts) {
  TorchIngestSummary counts;
  counts.spools = 2;
  counts.ops = 1;
  counts.threads = 1;
  counts.processes = 1;
  auto lines =
      torch_summary_lines({{1, "recorded (torch 2.11)"},
                           {1, "recorded (torch 2.11)"},
                           {3, "the program started torch.profiler"},
                           {3, "the program started torch.profiler"},
                           {2, "not recorded: torch 3.1 is not a version strata has checked"}},
                          counts);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "recorded (torch 2.11) \u2014 1 op on 1 thread in 1 process");
  EXPECT_EQ(lines[1], "the program started torch.profiler");
  EXPECT_EQ(lines[2], "not recorded: torch 3.1 is not a version strata has checked");
}

TEST_F(TorchIngestTest, NoTorchMarkersAloneSayTheProgramNeverImportedTorch) {
  std::ofstream(dir_.file("python-notorch-123")).put('\n');
  TorchIngestSummary s = ingest();
  EXPECT_FALSE(present_);
  EXPECT_EQ(s.notorch_markers, 1u);
  ASSERT_EQ(s.lines.size(), 1u);
  EXPECT_EQ(s.lines[0], "none (the program never imported torch)");
}

TEST_F(TorchIngestTest, NothingAtAllPrintsNothing) {
  EXPECT_TRUE(ingest().lines.empty());
}

TEST_F(TorchIngestTest, DamageIsCountedNotFatal) {
  {
    auto w = spool("torch-7.bin");
    strings(w, {{1, "aten::add"}});
    ops(w, {}, {torch_op(10, 20, 1), torch_op(30, 40, 99)});  // 99: no such string
    // A chunk whose CRC holds but whose records do not add up.
    auto bad = torch_ops_payload({}, {torch_op(1, 2, 1)});
    bad.pop_back();
    ASSERT_TRUE(w.append(ChunkKind::kTorchOps, bad.data(), bad.size()));
  }
  std::ofstream(dir_.file("torch-8.bin")) << "not a spool";
  TorchIngestSummary s = ingest();
  EXPECT_EQ(s.ops, 2u);
  ASSERT_EQ(rows_.ops.size(), 2u);
  EXPECT_EQ(rows_.ops[1].name, "<unresolved op name>");
  EXPECT_EQ(counters_["torch.unresolved_strings"], 1);
  EXPECT_EQ(counters_["torch.bad_payloads"], 1);
  EXPECT_EQ(counters_["torch.unreadable_spools"], 1);
  EXPECT_GE(s.damaged, 2u);
}

}  // namespace
}  // namespace strata::import
