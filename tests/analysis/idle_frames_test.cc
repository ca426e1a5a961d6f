// Which samples are idle-spinning (analysis/idle_frames.h), how much time
// they account for, per reason and per thread, and the profile without them.
#include "analysis/idle_frames.h"

#include <gtest/gtest.h>

#include "analysis/cpu_pstats.h"

namespace strata::analysis {
namespace {

FrameId frame(Profile& p, const std::string& function, const std::string& module,
              bool inlined = false) {
  Frame f;
  f.function = function;
  f.module = module;
  f.inlined = inlined;
  return p.frames.intern(f);
}

void sample(Profile& p, int32_t tid, std::vector<FrameId> stack) {
  Sample s;
  s.tid = tid;
  s.pid = 1;
  s.weight_ns = 1'000'000;  // 1 ms
  s.stack = std::move(stack);
  p.samples.push_back(std::move(s));
}

class IdleFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    p_.rate_hz = 1000;
    start_ = frame(p_, "start_thread", "/lib/libc.so.6");
    main_ = frame(p_, "main", "/bin/app");
  }
  Profile p_;
  FrameId start_ = 0;
  FrameId main_ = 0;
};

TEST_F(IdleFrames, TheLeafDecides) {
  FrameId server = frame(p_, "blas_thread_server", "/lib/libopenblas.so.0");
  FrameId gemm = frame(p_, "dgemm_kernel_HASWELL", "/lib/libopenblas.so.0");
  FrameId yield = frame(p_, "__GI___sched_yield", "/lib/libc.so.6");
  FrameId cond = frame(p_, "pthread_cond_wait@@GLIBC_2.3.2", "/lib/libc.so.6");
  FrameId lock = frame(p_, "__lll_lock_wait", "/lib/libc.so.6");
  FrameId gomp = frame(p_, "libgomp-a34b3233.so.1+0x1d2f0", "/opt/torch/lib/libgomp-a34b3233.so.1");
  FrameId work = frame(p_, "heavy(int)", "/bin/app");
  sample(p_, 2, {server, start_});           // 0: the server's own spin loop
  sample(p_, 2, {gemm, server, start_});     // 1: the same thread doing a GEMM
  sample(p_, 2, {yield, server, start_});    // 2: yielding
  sample(p_, 3, {cond, main_});              // 3: condition variable wait
  sample(p_, 1, {lock, main_});              // 4: contention is not idle
  sample(p_, 4, {gomp, start_});             // 5: a stripped libgomp
  sample(p_, 1, {work, main_});              // 6: work
  sample(p_, 1, {main_, yield});             // 7: idle frames deeper than the leaf do not count
  const char* want[] = {"OpenBLAS thread server waiting for work", nullptr, "sched_yield loop",
                        "condition variable wait", nullptr,
                        "OpenMP runtime (libgomp) spinning or waiting", nullptr, nullptr};
  for (size_t i = 0; i < p_.samples.size(); ++i) {
    const IdleRule* rule = idle_rule_of(p_, p_.samples[i]);
    if (want[i] == nullptr) {
      EXPECT_EQ(rule, nullptr) << "sample " << i << ": " << rule->what;
    } else {
      ASSERT_NE(rule, nullptr) << "sample " << i;
      EXPECT_EQ(rule->what, want[i]) << "sample " << i;
    }
  }
}

TEST_F(IdleFrames, AnInlinedLeafLooksIntoItsFunction) {
  FrameId helper = frame(p_, "spin_once", "/lib/libfoo.so", /*inlined=*/true);
  FrameId server = frame(p_, "blas_thread_server", "/lib/libopenblas.so.0");
  FrameId work = frame(p_, "work", "/bin/app");
  sample(p_, 2, {helper, server, start_});
  sample(p_, 2, {work, server, start_});
  EXPECT_NE(idle_rule_of(p_, p_.samples[0]), nullptr);
  EXPECT_EQ(idle_rule_of(p_, p_.samples[1]), nullptr);
}

// Debian's OpenBLAS has no blas_thread_server symbol: the thread entry's own
// code (called by start_thread) is the loop; a kernel it calls is work.
TEST_F(IdleFrames, StrippedOpenBLASThreadEntry) {
  FrameId entry = frame(p_, "libopenblasp-r0.3.21.so+0x374c10",
                        "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so");
  FrameId kernel = frame(p_, "libopenblasp-r0.3.21.so+0x1a0000",
                         "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so");
  sample(p_, 2, {entry, start_});
  sample(p_, 2, {kernel, entry, start_});
  sample(p_, 1, {kernel, main_});
  ASSERT_NE(idle_rule_of(p_, p_.samples[0]), nullptr);
  EXPECT_EQ(idle_rule_of(p_, p_.samples[0])->what, "OpenBLAS thread server waiting for work");
  EXPECT_EQ(idle_rule_of(p_, p_.samples[1]), nullptr);
  EXPECT_EQ(idle_rule_of(p_, p_.samples[2]), nullptr);
}

TEST_F(IdleFrames, SummaryPerReasonAndThreadAndTheProfileWithout) {
  FrameId server = frame(p_, "blas_thread_server", "/lib/libopenblas.so.0");
  FrameId yield = frame(p_, "sched_yield", "/lib/libc.so.6");
  FrameId work = frame(p_, "work", "/bin/app");
  for (int i = 0; i < 3; ++i) sample(p_, 2, {server, start_});
  sample(p_, 2, {yield, server, start_});
  for (int i = 0; i < 4; ++i) sample(p_, 1, {work, main_});
  IdleSummary s = idle_summary(p_);
  EXPECT_EQ(s.samples, 4u);
  EXPECT_DOUBLE_EQ(s.time_s, 0.004);
  EXPECT_DOUBLE_EQ(s.share, 0.5);
  ASSERT_EQ(s.by_what.size(), 2u);
  EXPECT_EQ(s.by_what[0].what, "OpenBLAS thread server waiting for work");
  EXPECT_EQ(s.by_what[0].samples, 3u);
  EXPECT_EQ(s.by_what[1].what, "sched_yield loop");
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].tid, 2);
  EXPECT_EQ(s.threads[0].samples, 4u);
  EXPECT_EQ(s.threads[0].what, "OpenBLAS thread server waiting for work");

  Profile busy = without_idle(p_);
  EXPECT_EQ(busy.samples.size(), 4u);
  EXPECT_EQ(idle_summary(busy).samples, 0u);
  EXPECT_EQ(busy.frames.size(), p_.frames.size());

  // The header counts every sample and names the idle time; the thread rows
  // carry it per thread.
  CpuHeader h = cpu_header(p_);
  EXPECT_EQ(h.samples, 8u);
  EXPECT_EQ(h.idle.samples, 4u);
  for (const CpuThreadRow& t : cpu_threads(p_)) {
    EXPECT_DOUBLE_EQ(t.idle_s, t.tid == 2 ? 0.004 : 0.0);
    EXPECT_EQ(t.idle_what.empty(), t.tid != 2);
  }
}

TEST_F(IdleFrames, InstrumentedProfilesAndDamagedIdsHaveNoIdle) {
  FrameId server = frame(p_, "blas_thread_server", "/lib/libopenblas.so.0");
  sample(p_, 2, {kInvalidFrame, server});
  sample(p_, 2, {});
  EXPECT_EQ(idle_summary(p_).samples, 0u);
  sample(p_, 2, {server});
  EXPECT_EQ(idle_summary(p_).samples, 1u);
  p_.mode = ProfileMode::kInstrumented;
  EXPECT_EQ(idle_summary(p_).samples, 0u);
  EXPECT_EQ(without_idle(p_).samples.size(), 3u);
}

}  // namespace
}  // namespace strata::analysis
