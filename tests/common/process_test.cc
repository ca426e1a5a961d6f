#include "common/process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace strata {
namespace {

TEST(RunProcess, ReportsExitStatus) {
  auto r = run_process({"sh", "-c", "exit 3"}, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->exit_status, 3);
  EXPECT_FALSE(r->signal.has_value());
  EXPECT_EQ(r->shell_status(), 3);
  EXPECT_EQ(describe_termination(*r), "exited with status 3");
}

TEST(RunProcess, ReportsKillingSignal) {
  auto r = run_process({"sh", "-c", "kill -SEGV $$"}, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->signal, 11);
  EXPECT_EQ(r->shell_status(), 139);
  EXPECT_EQ(describe_termination(*r), "killed by signal 11 (SIGSEGV)");
}

TEST(RunProcess, CannotStartIsAnError) {
  auto r = run_process({"/nonexistent/strata-test-binary"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "cannot start '/nonexistent/strata-test-binary': No such file or directory");
}

TEST(RunProcess, MeasuresWallAndCpuTime) {
  // A busy loop of ~50 ms of user time; wall must cover it.
  auto r = run_process({"sh", "-c", "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done"}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->succeeded());
  EXPECT_GT(r->user_ns + r->sys_ns, 0);
  EXPECT_GE(r->wall_ns, r->user_ns / 2);  // one thread: CPU time cannot far exceed wall
  EXPECT_GT(r->max_rss_kb, 0);
}

TEST(RunProcess, CapturesStdoutLinesAndEchoesNothingWhenAsked) {
  std::vector<std::string> lines;
  ProcessOptions po;
  po.output = OutputMode::kCapture;
  po.echo_captured = false;
  po.on_stdout_line = [&](std::string_view line) { lines.emplace_back(line); };
  auto r = run_process({"printf", "a=1\\nb=2\\nlast"}, po);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"a=1", "b=2", "last"}));
}

TEST(RunProcess, TellsTheChildPid) {
  std::vector<int> pids;
  ProcessOptions po;
  po.on_child = [&](int pid) { pids.push_back(pid); };
  auto r = run_process({"true"}, po);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_GT(pids[0], 0);
  EXPECT_EQ(pids[1], -1);
}

TEST(ReadProcText, ReadsPastOneBufferWhole) {
  // Any file will do; 200,000 bytes span several of its 64 KiB reads.
  char path[] = "/tmp/strata-read-proc-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string written;
  for (int i = 0; written.size() < 200'000; ++i) written += std::to_string(i) + "\n";
  std::ofstream(path, std::ios::binary) << written;
  const std::optional<std::string> read = read_proc_text(path);
  std::remove(path);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, written);
}

TEST(ReadProcText, AReapedProcessHasNoFileAndNothingThrows) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(read_proc_text("/proc/" + std::to_string(child) + "/stat").has_value());
  EXPECT_FALSE(process_fs_uid(child).has_value());
  const std::optional<std::string> own = read_proc_text("/proc/self/status");
  ASSERT_TRUE(own.has_value());
  EXPECT_NE(own->find("Uid:"), std::string::npos);
  EXPECT_EQ(process_fs_uid(getpid()), geteuid());
}

}  // namespace
}  // namespace strata
