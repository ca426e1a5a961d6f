// The chunks of 1.3 that libstrata_torch writes (torch-ops, torch-status):
// a round trip through a real spool (SpoolWriter -> SpoolReader -> decoder)
// and payloads damaged every way the decoders must refuse.
#include "format/torch_payloads.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../import/torch_spool_builder.h"
#include "format/spool_reader.h"
#include "format/spool_writer.h"
#include "util/temp_dir.h"

namespace strata::format {
namespace {

using test_util::torch_op;
using test_util::torch_ops_payload;
using test_util::torch_status_payload;

TEST(TorchPayloads, RoundTripThroughASpool) {
  test_util::TempDir dir{"strata-torch-payloads"};
  const std::string path = dir.file("torch-1.bin");
  TorchOpRecord a = torch_op(100, 200, 3, 41, 7);
  a.shapes_id = 4;
  a.stack_id = 5;
  a.depth = 2;
  a.scope = static_cast<uint8_t>(TorchScope::kBackwardFunction);
  a.flags = kTorchOpUnfinished;
  TorchOpRecord b = torch_op(0, UINT64_MAX, 9);
  test_util::TorchOpsPrefix prefix{77, InstrumentClock::kTsc, 1000, 2000, 3000, 4000};
  {
    auto w = SpoolWriter::open(path);
    ASSERT_TRUE(w) << w.error().message;
    auto ops = torch_ops_payload(prefix, {a, b});
    ASSERT_TRUE(w->append(ChunkKind::kTorchOps, ops.data(), ops.size()));
    auto status = torch_status_payload(1, "recorded by a RecordFunction callback (torch 1.13.1)");
    ASSERT_TRUE(w->append(ChunkKind::kTorchStatus, status.data(), status.size()));
  }
  auto r = SpoolReader::open(path);
  ASSERT_TRUE(r) << r.error().message;
  Chunk chunk;
  ASSERT_TRUE(r->next(&chunk));
  EXPECT_EQ(chunk.kind, ChunkKind::kTorchOps);
  auto ops = decode_torch_ops(chunk.payload);
  ASSERT_TRUE(ops) << ops.error().message;
  EXPECT_EQ(ops->tid, 77u);
  EXPECT_EQ(ops->clock, InstrumentClock::kTsc);
  EXPECT_EQ(ops->ref_ns, 1000);
  EXPECT_EQ(ops->now_ticks, 4000u);
  ASSERT_EQ(ops->ops.size(), 2u);
  const TorchOpRecord& got = ops->ops[0];
  EXPECT_EQ(got.start, 100u);
  EXPECT_EQ(got.end, 200u);
  EXPECT_EQ(got.external_id, 41u);
  EXPECT_EQ(got.seq, 7);
  EXPECT_EQ(got.name_id, 3u);
  EXPECT_EQ(got.shapes_id, 4u);
  EXPECT_EQ(got.stack_id, 5u);
  EXPECT_EQ(got.depth, 2);
  EXPECT_EQ(got.scope, 1);
  EXPECT_EQ(got.flags, kTorchOpUnfinished);
  EXPECT_EQ(ops->ops[1].end, UINT64_MAX);
  EXPECT_EQ(ops->ops[1].seq, -1);
  ASSERT_TRUE(r->next(&chunk));
  EXPECT_EQ(chunk.kind, ChunkKind::kTorchStatus);
  auto status = decode_torch_status(chunk.payload);
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->status, TorchStatus::kRecording);
  EXPECT_EQ(status->text, "recorded by a RecordFunction callback (torch 1.13.1)");
}

TEST(TorchPayloads, EmptyOpsChunkAndEmptyStatusTextDecode) {
  auto ops = decode_torch_ops(torch_ops_payload({}, {}));
  ASSERT_TRUE(ops);
  EXPECT_TRUE(ops->ops.empty());
  auto status = decode_torch_status(torch_status_payload(4, ""));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, TorchStatus::kNote);
  EXPECT_EQ(status->text, "");
}

TEST(TorchPayloads, DamagedOpsChunksAreRefused) {
  const auto good = torch_ops_payload({}, {torch_op(1, 2, 1)});
  // Short of the prefix, and a partial record.
  EXPECT_FALSE(decode_torch_ops(std::span(good).first(kTorchOpsPrefix - 1)));
  EXPECT_FALSE(decode_torch_ops(std::span(good).first(good.size() - 1)));
  // An unknown clock.
  test_util::TorchOpsPrefix bad_clock;
  bad_clock.clock = static_cast<InstrumentClock>(9);
  EXPECT_FALSE(decode_torch_ops(torch_ops_payload(bad_clock, {torch_op(1, 2, 1)})));
  // An unknown scope.
  TorchOpRecord scope = torch_op(1, 2, 1);
  scope.scope = kTorchScopeCount;
  EXPECT_FALSE(decode_torch_ops(torch_ops_payload({}, {torch_op(1, 2, 1), scope})));
  // An op that ends before it starts.
  EXPECT_FALSE(decode_torch_ops(torch_ops_payload({}, {torch_op(5, 4, 1)})));
}

TEST(TorchPayloads, DamagedStatusChunksAreRefused) {
  const auto empty = torch_status_payload(1, "");
  EXPECT_FALSE(decode_torch_status(std::span(empty).first(7)));
  EXPECT_FALSE(decode_torch_status(torch_status_payload(0, "x")));
  EXPECT_FALSE(decode_torch_status(torch_status_payload(5, "x")));
}

}  // namespace
}  // namespace strata::format
