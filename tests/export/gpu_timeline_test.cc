// export/gpu_timeline.h: the timeline the Chrome export draws, assembled from
// loaded tables (names, copy labels, NVTX text and domains, open ranges).
#include "export/gpu_timeline.h"

#include <gtest/gtest.h>

namespace strata::exporter {
namespace {

int64_t gtid(int64_t pid, int64_t tid) {
  return (pid << 24) | tid;
}

struct Tables {
  store::GpuTables t;
  void nvtx(int64_t start, int64_t end, int32_t type, int64_t tid, int64_t text_id,
            const char* text, int64_t domain = 0) {
    auto& n = t.nvtx;
    n.start.push_back(start);
    n.end.push_back(end);
    n.event_type.push_back(type);
    n.global_tid.push_back(tid);
    n.domain_id.push_back(domain);
    n.text_id.push_back(text_id);
    if (text == nullptr) {
      n.text_index.push_back(-1);
    } else {
      n.text_index.push_back(static_cast<int32_t>(n.texts.size()));
      n.texts.emplace_back(text);
    }
  }
};

TEST(GpuTimeline, CallsKernelsAndCopiesKeepTheirColumnsAndNames) {
  Tables x;
  auto& t = x.t;
  t.strings = {{1, "cuLaunchKernel"}, {2, "gemm(float*)"}};
  t.runtime = {{0}, {10}, {gtid(1, 2)}, {5}, {1}, {1}};
  t.kernels.start = {20};
  t.kernels.end = {30};
  t.kernels.name_id = {2};
  t.kernels.device_id = {3};
  t.kernels.correlation_id = {5};
  t.kernels.global_pid = {gtid(1, 0)};
  t.kernels.launch = {{7}, {{4, 2, 1}}, {{128, 1, 1}}, {32}, {48}, {16}};
  t.memcpy = {{40, 45}, {50, 55}, {4096, 8}, {1, 99}, {gtid(1, 0)}, {0}, {8}, {6}, {}, {}};
  t.memset = {{60}, {70}, {8}, {}, {gtid(1, 0)}, {0}, {9}, {0}, {}, {}};
  t.memcpy_labels = {{1, "Host-to-Device"}};
  auto tl = gpu_timeline(t);
  ASSERT_EQ(tl.api_calls.size(), 1u);
  EXPECT_EQ(tl.api_calls[0].name, "cuLaunchKernel");
  EXPECT_TRUE(tl.api_calls[0].driver);
  EXPECT_EQ(tl.api_calls[0].correlation_id, 5);
  ASSERT_EQ(tl.gpu_ops.size(), 4u);
  const auto& k = tl.gpu_ops[0];
  EXPECT_EQ(k.kind, GpuOpKind::kKernel);
  EXPECT_EQ(k.name, "gemm(float*)");
  EXPECT_EQ(k.stream_id, 7);
  EXPECT_EQ(k.device_id, 3);
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{4, 2, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{128, 1, 1}));
  EXPECT_EQ(k.registers_per_thread, 32);
  EXPECT_EQ(k.static_shared_memory, 48);
  EXPECT_EQ(k.dynamic_shared_memory, 16);
  EXPECT_EQ(tl.gpu_ops[1].name, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(tl.gpu_ops[1].copy_kind, "Host-to-Device");
  EXPECT_EQ(tl.gpu_ops[1].stream_id, 8);
  EXPECT_EQ(tl.gpu_ops[1].correlation_id, 6);
  EXPECT_EQ(tl.gpu_ops[2].name, "[CUDA memcpy]");  // a kind the enum lacks
  EXPECT_EQ(tl.gpu_ops[3].kind, GpuOpKind::kMemset);
  EXPECT_EQ(tl.gpu_ops[3].name, "[CUDA memset]");
  EXPECT_EQ(tl.gpu_ops[3].bytes, 8);
}

TEST(GpuTimeline, NvtxTextDomainsOrderAndOpenRanges) {
  Tables x;
  auto& t = x.t;
  t.strings = {{1, "step"}, {2, "torch"}};
  const int64_t none = store::kNoString;
  const int64_t no_end = store::NvtxColumns::kNoEnd;
  x.nvtx(5, 0, store::kNvtxDomainCreate, gtid(1, 1), 2, nullptr, 7);  // names domain 7
  x.nvtx(30, 40, store::kNvtxStartEndRange, gtid(1, 1), none, "explicit");
  x.nvtx(10, 20, store::kNvtxPushPopRange, gtid(1, 2), 1, "ignored", 7);     // textId wins
  x.nvtx(15, no_end, store::kNvtxPushPopRange, gtid(1, 1), 99, nullptr, 8);  // unknown id
  t.nvtx.last_timestamp = 90;
  auto tl = gpu_timeline(t);
  ASSERT_EQ(tl.nvtx_ranges.size(), 3u);
  // By start.
  const auto& a = tl.nvtx_ranges[0];
  EXPECT_EQ(a.start, 10);
  EXPECT_EQ(a.name, "step");
  EXPECT_EQ(a.domain, "torch");
  EXPECT_TRUE(a.push_pop);
  const auto& b = tl.nvtx_ranges[1];
  EXPECT_EQ(b.name, "");            // a textId StringIds lacks: no name, not the text
  EXPECT_EQ(b.domain, "domain 8");  // no creation event names it
  EXPECT_TRUE(b.unterminated);
  EXPECT_EQ(b.end, 90);
  const auto& c = tl.nvtx_ranges[2];
  EXPECT_EQ(c.name, "explicit");
  EXPECT_EQ(c.domain, "");
  EXPECT_FALSE(c.push_pop);
  EXPECT_FALSE(c.unterminated);
}

TEST(GpuTimeline, ThreadAndProcessNamesAndEmptyTables) {
  store::GpuTables t;
  EXPECT_TRUE(gpu_timeline(t).empty());
  t.strings = {{4, "worker"}};
  t.thread_name_ids = {{gtid(1, 2), 4}, {gtid(1, 3), store::kNoString}};
  t.process_names = {{gtid(1, 0), "python"}};
  auto tl = gpu_timeline(t);
  EXPECT_TRUE(tl.empty());  // names alone draw nothing
  EXPECT_EQ(tl.thread_names.at(gtid(1, 2)), "worker");
  EXPECT_EQ(tl.thread_names.at(gtid(1, 3)), "");
  EXPECT_EQ(tl.process_names.at(gtid(1, 0)), "python");
}

}  // namespace
}  // namespace strata::exporter
