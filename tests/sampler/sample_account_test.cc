// Where the samples asked for went (issue 21 item 7): account_samples,
// sampling_slowdown and count_processes on hand-built profiles.
#include <gtest/gtest.h>

#include "sampler/sampler.h"

namespace strata::sampler {
namespace {

// 1 s of on-CPU time at 1 kHz: 1000 periods asked for.
RawProfile one_second_at_1khz(size_t recorded) {
  RawProfile p;
  p.frequency_hz = 1000;
  p.period_ns = 1'000'000;
  p.counters.clock_ns = 1'000'000'000;
  p.start_ns = 0;
  p.end_ns = 2'000'000'000;
  p.child_pid = 10;
  p.user_ns = 900'000'000;
  p.sys_ns = 100'000'000;
  for (size_t i = 0; i < recorded; ++i) {
    Sample s;
    s.pid = 10;
    s.tid = 10;
    s.time = i * 1'000'000;
    p.samples.push_back(s);
  }
  return p;
}

TEST(SampleAccountTest, EveryPeriodIsRecordedLostThrottledOrSkipped) {
  RawProfile p = one_second_at_1khz(500);
  p.counters.lost_samples = 100;
  // CPU 0 throttled for 50 ms, CPU 1 from 1.98 s to the end (20 ms).
  p.throttles = {{true, 100'000'000, 0}, {false, 150'000'000, 0}, {true, 1'980'000'000, 1}};
  const SampleAccount a = account_samples(p);
  EXPECT_EQ(a.asked, 1000u);
  EXPECT_EQ(a.recorded, 500u);
  EXPECT_EQ(a.lost, 100u);
  EXPECT_EQ(a.throttled, 70u);
  EXPECT_EQ(a.skipped, 330u);
  EXPECT_EQ(a.recorded + a.lost + a.throttled + a.skipped, a.asked);
  EXPECT_DOUBLE_EQ(a.effective_hz, 500.0);
}

TEST(SampleAccountTest, TimerSlackAboveTheAskedCountIsNotNegative) {
  RawProfile p = one_second_at_1khz(1003);
  const SampleAccount a = account_samples(p);
  EXPECT_EQ(a.skipped, 0u);
  EXPECT_EQ(a.throttled, 0u);
}

TEST(SampleAccountTest, WithoutTheClockCountNothingIsClaimed) {
  RawProfile p = one_second_at_1khz(10);
  p.counters.clock_ns = 0;  // the in-process sampler has none
  EXPECT_EQ(account_samples(p).asked, 0u);
  EXPECT_EQ(sampling_slowdown(p, account_samples(p)), 0);
}

TEST(SampleAccountTest, SlowdownIsTheSmallerOfSkippedAndSystemShares) {
  RawProfile p = one_second_at_1khz(500);  // 50 % skipped
  p.user_ns = 600'000'000;
  p.sys_ns = 400'000'000;  // 40 % system time: the bound
  EXPECT_NEAR(sampling_slowdown(p, account_samples(p)), 0.4 / 0.6, 1e-9);
  // A program in system calls with nothing skipped costs nothing.
  RawProfile full = one_second_at_1khz(1000);
  full.sys_ns = 900'000'000;
  EXPECT_EQ(sampling_slowdown(full, account_samples(full)), 0);
}

TEST(SampleAccountTest, ProcessesWithoutSamplesAreTooShort) {
  RawProfile p = one_second_at_1khz(5);
  p.tasks = {{true, 0, 11, 10, 11, 10},   // a child process
             {true, 0, 10, 10, 12, 10},   // a thread of the command: not a process
             {true, 0, 13, 10, 13, 10}};  // another child
  p.samples[4].pid = 13;
  const ProcessCount c = count_processes(p);
  EXPECT_EQ(c.processes, 3u);
  EXPECT_EQ(c.unsampled, 1u);  // pid 11
}

}  // namespace
}  // namespace strata::sampler
