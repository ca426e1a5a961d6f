// import::link_calls_to_ops and link_torch_ops_by_clock: each CUDA call
// linked to the innermost op open around its start on its own thread, and
// processes whose ops pushed their ids (rows already there) left alone.
#include "import/torch_op_links.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/torch_op_profile.h"
#include "common/global_id.h"
#include "format/torch_payloads.h"
#include "store/sqlite_util.h"
#include "store/torch_op_rows.h"
#include "util/temp_dir.h"

namespace strata::import {
namespace {

constexpr int64_t kPidA = int64_t{1} << 40;  // two processes, nsys's encoding
constexpr int64_t kPidB = int64_t{2} << 40;
constexpr int64_t kThreadA1 = kPidA | 11;
constexpr int64_t kThreadA2 = kPidA | 12;
constexpr int64_t kThreadB = kPidB | 21;

// correlation id -> the external id it was linked to (0: none).
int64_t linked_to(const std::vector<store::ExternalCorrelationRow>& rows, int64_t correlation) {
  for (const auto& r : rows) {
    if (r.correlation_id == correlation) return r.external_id;
  }
  return 0;
}

TEST(LinkCallsToOps, InnermostOpOpenOnTheCallsOwnThread) {
  std::vector<OpSpan> ops = {
      {kThreadA1, 100, 1000, 0, 1},  // outer
      {kThreadA1, 200, 300, 1, 2},   // inner
      {kThreadA1, 400, 500, 1, 3},   // inner, second
      {kThreadA1, 420, 480, 2, 4},   // innermost in the second
      {kThreadA2, 0, 5000, 0, 5},    // another thread, open throughout
  };
  std::vector<CallStart> calls = {
      {kThreadA1, 250, 10},   // in 2
      {kThreadA1, 350, 11},   // between the inners: the outer
      {kThreadA1, 450, 12},   // in 4
      {kThreadA1, 490, 13},   // 4 has ended, 3 has not
      {kThreadA1, 1500, 14},  // after every op
      {kThreadA1, 50, 15},    // before every op
      {kThreadA2, 250, 16},   // same time as 10, other thread
      {kPidA | 99, 250, 17},  // a thread without ops
      {kThreadA1, 200, 18},   // at an op's first ns: in it
      {kThreadA1, 300, 19},   // at its last ns: still in it
  };
  auto rows = link_calls_to_ops(ops, calls);
  EXPECT_EQ(linked_to(rows, 10), 2);
  EXPECT_EQ(linked_to(rows, 11), 1);
  EXPECT_EQ(linked_to(rows, 12), 4);
  EXPECT_EQ(linked_to(rows, 13), 3);
  EXPECT_EQ(linked_to(rows, 14), 0);
  EXPECT_EQ(linked_to(rows, 15), 0);
  EXPECT_EQ(linked_to(rows, 16), 5);
  EXPECT_EQ(linked_to(rows, 17), 0);
  EXPECT_EQ(linked_to(rows, 18), 2);
  EXPECT_EQ(linked_to(rows, 19), 2);
  EXPECT_EQ(rows.size(), 7u);  // all but 14, 15 and 17
  for (const auto& r : rows) {
    EXPECT_EQ(r.external_kind, analysis::kTorchExternalKind);
    EXPECT_EQ(r.global_pid, kPidA);
  }
}

TEST(LinkCallsToOps, ChildStartingWithItsParentIsTheInnermost) {
  // Equal starts (a coarse clock): the deeper op wins, in either input order.
  std::vector<OpSpan> ops = {{kThreadA1, 100, 200, 1, 7}, {kThreadA1, 100, 300, 0, 6}};
  auto rows = link_calls_to_ops(ops, {{kThreadA1, 100, 1}, {kThreadA1, 250, 2}});
  EXPECT_EQ(linked_to(rows, 1), 7);
  EXPECT_EQ(linked_to(rows, 2), 6);
}

TEST(LinkCallsToOps, AnUnfinishedOpHoldsTheCallsAfterItsLastChild) {
  // An op written unfinished ends when its process wrote it: calls after its
  // children, outside every other op, are its.
  std::vector<OpSpan> ops = {{kThreadB, 10, 9000, 0, 1}, {kThreadB, 20, 30, 1, 2},
                             {kThreadB, 40, 50, 1, 3}};
  auto rows = link_calls_to_ops(ops, {{kThreadB, 25, 1}, {kThreadB, 45, 2}, {kThreadB, 60, 3}});
  EXPECT_EQ(linked_to(rows, 1), 2);
  EXPECT_EQ(linked_to(rows, 2), 3);
  EXPECT_EQ(linked_to(rows, 3), 1);
}

TEST(LinkCallsToOps, ManyThreadsInterleavedInTheInput) {
  std::vector<OpSpan> ops;
  std::vector<CallStart> calls;
  for (int64_t t = 0; t < 50; ++t) {
    const int64_t thread = kPidA | (100 + t);
    for (int64_t k = 0; k < 20; ++k) {
      ops.push_back({thread, k * 100, k * 100 + 50, 0, t * 1000 + k + 1});
      calls.push_back({thread, k * 100 + 25, t * 1000 + k + 1});  // inside op k
      calls.push_back({thread, k * 100 + 75, -(t * 1000 + k + 1)});  // between ops
    }
  }
  std::reverse(ops.begin(), ops.end());
  auto rows = link_calls_to_ops(ops, calls);
  ASSERT_EQ(rows.size(), 1000u);
  for (const auto& r : rows) EXPECT_EQ(r.external_id, r.correlation_id);
}

class LinkTorchOpsByClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto w = store::TraceWriter::create(dir_.file("t.sqlite"), false);
    ASSERT_TRUE(w) << w.error().message;
    writer_.emplace(std::move(*w));
  }
  void call(int64_t global_tid, int64_t start, int64_t correlation) {
    auto st = store::sql::exec(
        writer_->handle(),
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
        "correlationId, nameId, returnValue) VALUES (" +
            std::to_string(start) + ", " + std::to_string(start + 5) + ", 1, " +
            std::to_string(global_tid) + ", " + std::to_string(correlation) + ", 0, 0)",
        "test");
    ASSERT_TRUE(st) << st.error().message;
  }
  store::TorchOpRow op(int64_t global_tid, int64_t start, int64_t end, int64_t id) {
    store::TorchOpRow r;
    r.start = start;
    r.end = end;
    r.global_tid = global_tid;
    r.external_id = id;
    return r;
  }
  test_util::TempDir dir_;
  std::optional<store::TraceWriter> writer_;
};

TEST_F(LinkTorchOpsByClockTest, LinksOnlyProcessesWithoutPushedIds) {
  std::vector<store::TorchOpRow> ops = {op(kThreadA1, 100, 200, 1), op(kThreadB, 100, 200, 2)};
  ASSERT_TRUE(store::write_torch_ops(*writer_, ops));
  call(kThreadA1, 150, 10);
  call(kThreadA1, 250, 11);
  call(kThreadB, 150, 20);
  // B's op pushed its id: CUPTI's row is there, and is the one kept.
  std::vector<store::ExternalCorrelationRow> pushed = {
      {kPidB, analysis::kTorchExternalKind, 2, 20}};
  ASSERT_TRUE(store::write_external_correlations(*writer_, pushed));

  auto linked = link_torch_ops_by_clock(*writer_);
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_EQ(*linked, 1u);  // call 10; 11 is outside the op, 20 was linked already
  ASSERT_TRUE(writer_->commit());

  auto reader = store::TraceReader::open(dir_.file("t.sqlite"));
  ASSERT_TRUE(reader) << reader.error().message;
  auto rows = store::load_torch_op_rows(*reader);
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->correlations.size(), 2u);
  EXPECT_EQ(linked_to(rows->correlations, 10), 1);
  EXPECT_EQ(linked_to(rows->correlations, 11), 0);
  EXPECT_EQ(linked_to(rows->correlations, 20), 2);
}

// Under STRATA_AGENT_CLOCK=cupti the ops push their ids and the calls are on
// CUPTI's clock: a process none of whose calls CUPTI put inside an op has no
// rows, and its numbers must not be read as one clock either.
TEST_F(LinkTorchOpsByClockTest, OpsThatPushedTheirIdsAreNeverLinkedByTheClock) {
  store::TorchOpRow pushed = op(kThreadB, 100, 200, 2);
  pushed.flags = format::kTorchOpPushed;
  std::vector<store::TorchOpRow> ops = {op(kThreadA1, 100, 200, 1), pushed};
  ASSERT_TRUE(store::write_torch_ops(*writer_, ops));
  call(kThreadA1, 150, 10);
  call(kThreadB, 150, 20);  // inside B's op by the numbers, on another clock
  auto linked = link_torch_ops_by_clock(*writer_);
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_EQ(*linked, 1u);
  ASSERT_TRUE(writer_->commit());
  auto reader = store::TraceReader::open(dir_.file("t.sqlite"));
  ASSERT_TRUE(reader) << reader.error().message;
  auto rows = store::load_torch_op_rows(*reader);
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(linked_to(rows->correlations, 10), 1);
  EXPECT_EQ(linked_to(rows->correlations, 20), 0);
}

TEST_F(LinkTorchOpsByClockTest, NothingToLinkWithoutOps) {
  call(kThreadA1, 150, 10);
  auto linked = link_torch_ops_by_clock(*writer_);
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_EQ(*linked, 0u);
}

// A real capture (tests/data/trace-torch_train-h100, made while the ops still
// pushed their ids): the clock's links must be CUPTI's, call for call.
TEST(LinkCallsToOps, SameLinksAsCuptisExternalCorrelationOnARealTrace) {
  const std::string path = std::string(STRATA_TEST_DATA) + "/trace-torch_train-h100/trace.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  auto rows = [&](const char* query, auto&& each) {
    auto stmt = store::sql::Statement::prepare(db, query, path);
    ASSERT_TRUE(stmt) << stmt.error().message;
    while (stmt->step() == SQLITE_ROW) each(*stmt);
  };
  std::vector<OpSpan> ops;
  rows("SELECT globalTid, start, end, depth, externalId FROM strata_torch_ops",
       [&](const store::sql::Statement& s) {
         ops.push_back({s.column_int(0), s.column_int(1), s.column_int(2), s.column_int(3),
                        s.column_int(4)});
       });
  std::vector<CallStart> calls;
  rows("SELECT globalTid, start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
       [&](const store::sql::Statement& s) {
         calls.push_back({s.column_int(0), s.column_int(1), s.column_int(2)});
       });
  std::map<int64_t, int64_t> cupti;  // correlation id -> the id the op pushed
  rows("SELECT correlationId, externalId FROM strata_external_correlation",
       [&](const store::sql::Statement& s) { cupti[s.column_int(0)] = s.column_int(1); });
  sqlite3_close(db);
  ASSERT_EQ(ops.size(), 2826u);
  ASSERT_EQ(calls.size(), 1477u);
  ASSERT_EQ(cupti.size(), 1356u);  // the other 121 calls ran outside every op

  auto links = link_calls_to_ops(ops, calls);
  std::map<int64_t, int64_t> clock;
  for (const auto& l : links) clock[l.correlation_id] = l.external_id;
  EXPECT_EQ(clock, cupti);
}

}  // namespace
}  // namespace strata::import
