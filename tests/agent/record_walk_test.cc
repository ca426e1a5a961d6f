// The agent's record walk: its record sizes agree with libcupti's own
// cuptiActivityGetNextRecord (which parses buffers without a GPU), string
// pointers become ids whose texts reach the spool once, and the offline
// walker (cupti_walk.h) reads it all back.
#include "agent/cuda/record_walk.h"

#include <cupti.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cupti_walk.h"
#include "format/spool_writer.h"
#include "util/temp_dir.h"

namespace {

using strata::format::cupti_record_size;

using strata::test_util::TempDir;

TEST(RecordWalk, SizesMatchLibcuptisOwnParser) {
  const uint32_t kinds[] = {
      CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
      CUPTI_ACTIVITY_KIND_DRIVER,
      CUPTI_ACTIVITY_KIND_RUNTIME,
      CUPTI_ACTIVITY_KIND_DEVICE,
      CUPTI_ACTIVITY_KIND_CONTEXT,
      CUPTI_ACTIVITY_KIND_NAME,
      CUPTI_ACTIVITY_KIND_MARKER,
      CUPTI_ACTIVITY_KIND_MARKER_DATA,
      CUPTI_ACTIVITY_KIND_MEMCPY2,
      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
      CUPTI_ACTIVITY_KIND_OVERHEAD,
      CUPTI_ACTIVITY_KIND_KERNEL,
  };
  alignas(8) static uint8_t buffer[4096];
  for (uint32_t kind : kinds) {
    SCOPED_TRACE("kind " + std::to_string(kind));
    std::memset(buffer, 0, sizeof(buffer));
    for (size_t at = 0; at + 8 <= sizeof(buffer); at += 8) std::memcpy(buffer + at, &kind, 4);
    CUpti_Activity* record = nullptr;
    ASSERT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(buffer), &record), CUPTI_SUCCESS);
    ASSERT_EQ(reinterpret_cast<uint8_t*>(record), buffer);
    ASSERT_EQ(cuptiActivityGetNextRecord(buffer, sizeof(buffer), &record), CUPTI_SUCCESS);
    EXPECT_EQ(static_cast<size_t>(reinterpret_cast<uint8_t*>(record) - buffer),
              cupti_record_size(kind));
  }
  EXPECT_EQ(cupti_record_size(9999), 0u);
}

struct Built {
  std::vector<uint8_t> bytes;
};

template <class T>
void add(std::vector<uint8_t>& out, const T& record) {
  size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &record, sizeof(T));
}

TEST(RecordWalk, RewritesStringPointersAndTheSpoolReadsBack) {
  TempDir dir;
  std::string path = dir.file("spool-1.bin");
  auto opened = strata::format::SpoolWriter::open(path);
  ASSERT_TRUE(opened) << opened.error().message;
  strata::format::SpoolWriter spool = std::move(*opened);
  strata::agent::StringIds ids;
  ASSERT_TRUE(ids.init(64));

  static const char kKernel[] = "_Z12empty_kernelv";
  static const char kRange[] = "outer";
  static const char kDomain[] = "strata-test";
  std::vector<uint8_t> records;
  for (int i = 0; i < 2; ++i) {
    CUpti_ActivityAPI api{};
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api.start = 100 + i;
    api.end = 200 + i;
    api.correlationId = 7 + i;
    api.threadId = 1234;
    add(records, api);
    CUpti_ActivityKernel10 kernel{};
    kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    kernel.name = kKernel;
    kernel.correlationId = 7 + i;
    kernel.start = 300;
    kernel.end = 400;
    kernel.blockX = 32;
    add(records, kernel);
  }
  CUpti_ActivityMarker2 start{};
  start.kind = CUPTI_ACTIVITY_KIND_MARKER;
  start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  start.id = 5;
  start.name = kRange;
  start.domain = kDomain;
  add(records, start);
  CUpti_ActivityMarker2 end{};
  end.kind = CUPTI_ACTIVITY_KIND_MARKER;
  end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  end.id = 5;
  add(records, end);
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.bytes = 1 << 20;
  add(records, copy);

  strata::agent::StringBatch batch(spool);
  auto walk = strata::agent::walk_and_rewrite(records.data(), records.size(), ids, batch, false);
  EXPECT_TRUE(walk.complete);
  EXPECT_EQ(walk.records, 7u);
  EXPECT_EQ(walk.strings, 4u);  // two kernel names, marker name and domain
  EXPECT_TRUE(batch.flush());
  ASSERT_TRUE(spool.append_cupti_buffer(130001, records.data(), records.size()));
  // A second buffer with the same kernel name: no new strings chunk entry.
  std::vector<uint8_t> again;
  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.name = kKernel;
  add(again, kernel);
  strata::agent::StringBatch batch2(spool);
  strata::agent::walk_and_rewrite(again.data(), again.size(), ids, batch2, false);
  EXPECT_TRUE(batch2.flush());
  ASSERT_TRUE(spool.append_cupti_buffer(130001, again.data(), again.size()));
  ASSERT_TRUE(spool.close());

  std::string error;
  auto read = agent_test::read_spool(path, &error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->strings.size(), 3u);
  ASSERT_EQ(read->kernels.size(), 3u);
  for (const auto& k : read->kernels) EXPECT_EQ(k.name, kKernel);
  ASSERT_EQ(read->apis.size(), 2u);
  EXPECT_EQ(read->apis[0].correlation, read->kernels[0].correlation);
  ASSERT_EQ(read->markers.size(), 2u);
  EXPECT_EQ(read->markers[0].name, "outer");
  EXPECT_EQ(read->markers[0].domain, "strata-test");
  EXPECT_EQ(read->markers[1].name, "");
  ASSERT_EQ(read->memcpys.size(), 1u);
  EXPECT_EQ(read->memcpys[0].bytes, 1u << 20);
  EXPECT_EQ(read->unknown_records, 0u);
  EXPECT_EQ(read->unresolved_strings, 0u);
  EXPECT_TRUE(read->clean_end);
}

TEST(RecordWalk, StopsAtAnUnknownKind) {
  std::vector<uint8_t> records;
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  add(records, api);
  uint64_t junk[4] = {9999, 0, 0, 0};
  add(records, junk);
  strata::agent::StringIds ids;
  ASSERT_TRUE(ids.init(16));
  strata::format::SpoolWriter closed;
  strata::agent::StringBatch batch(closed);
  auto walk = strata::agent::walk_and_rewrite(records.data(), records.size(), ids, batch, false);
  EXPECT_FALSE(walk.complete);
  EXPECT_EQ(walk.records, 1u);
  EXPECT_EQ(walk.stopped_at, sizeof(CUpti_ActivityAPI));
}

TEST(RecordWalk, StringIdsClaimOnceAndSurviveAFullTable) {
  strata::agent::StringIds ids;
  ASSERT_TRUE(ids.init(4));
  EXPECT_TRUE(ids.claim(11));
  EXPECT_FALSE(ids.claim(11));
  for (uint64_t id = 100; id < 200; ++id) ids.claim(id);
  // Full: unknown ids are reported new (written again), never lost.
  EXPECT_TRUE(ids.claim(12345));
  EXPECT_NE(strata::agent::string_id("", 0), 0u);
}

}  // namespace
