// The writer in the situations the agent puts it in: a forked child that
// keeps the inherited spool, a child that opens its own, appends and close
// from a signal handler, several threads appending at once, and the
// no-allocation-after-open contract.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "format/spool_reader.h"
#include "format/spool_writer.h"
#include "spool_test_util.h"

namespace strata::format {
namespace {

using testing::TempDir;

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> thread_names(SpoolReader& reader) {
  std::vector<std::string> names;
  Chunk chunk;
  while (reader.next(&chunk)) {
    if (chunk.kind != ChunkKind::kThreadName) continue;
    auto t = decode_thread_name(chunk.payload);
    if (t.ok()) names.emplace_back(t->name);
  }
  return names;
}

TEST(SpoolFork, ChildAppendsToInheritedSpool) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->append_thread_name(1, "parent-before"));
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    bool ok = writer->append_thread_name(2, "child");
    // Not the opener: closes the fd without ending the parent's spool.
    bool wrote_end = writer->close();
    ::_exit(ok && !wrote_end ? 0 : 1);
  }
  ASSERT_EQ(wait_child(pid), 0);
  ASSERT_TRUE(writer->append_thread_name(1, "parent-after"));
  ASSERT_TRUE(writer->close());

  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(thread_names(*reader),
            (std::vector<std::string>{"parent-before", "child", "parent-after"}));
  EXPECT_TRUE(reader->stats().intact());
  EXPECT_EQ(reader->stats().chunks_after_end, 0u);
}

TEST(SpoolFork, ChildOpensItsOwnSpool) {
  TempDir dir;
  std::string parent_path = dir.file("spool-parent.bin");
  std::string child_path = dir.file("spool-child.bin");
  auto writer = SpoolWriter::open(parent_path);
  ASSERT_TRUE(writer.ok());
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    writer->abandon();
    auto own = SpoolWriter::open(child_path);
    bool ok = own.ok() && own->append_thread_name(3, "child-main") && own->close();
    ::_exit(ok ? 0 : 1);
  }
  ASSERT_EQ(wait_child(pid), 0);
  ASSERT_TRUE(writer->close());

  auto child = SpoolReader::open(child_path);
  ASSERT_TRUE(child.ok()) << child.error().message;
  EXPECT_EQ(child->header().pid, static_cast<uint32_t>(pid));
  EXPECT_EQ(thread_names(*child), std::vector<std::string>{"child-main"});
  EXPECT_TRUE(child->stats().intact());
  auto parent = SpoolReader::open(parent_path);
  ASSERT_TRUE(parent.ok());
  EXPECT_TRUE(thread_names(*parent).empty());
  EXPECT_TRUE(parent->stats().intact());
}

SpoolWriter* g_handler_writer = nullptr;

void crash_handler(int signal) {
  g_handler_writer->append_thread_name(9, "flushed-in-handler");
  g_handler_writer->close(static_cast<uint32_t>(signal));
  ::_exit(0);
}

TEST(SpoolFork, FlushAndCloseFromSignalHandler) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto writer = SpoolWriter::open(path);
    if (!writer.ok()) ::_exit(2);
    writer->append_thread_name(1, "main");
    g_handler_writer = &*writer;
    struct sigaction sa = {};
    sa.sa_handler = crash_handler;
    ::sigaction(SIGSEGV, &sa, nullptr);
    ::raise(SIGSEGV);
    ::_exit(3);
  }
  ASSERT_EQ(wait_child(pid), 0);
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(thread_names(*reader), (std::vector<std::string>{"main", "flushed-in-handler"}));
  EXPECT_TRUE(reader->stats().end_seen);
  EXPECT_FALSE(reader->stats().clean_end);
  EXPECT_EQ(reader->stats().end->signal, static_cast<uint32_t>(SIGSEGV));
}

TEST(SpoolFork, KilledChildKeepsWhatItWrote) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto writer = SpoolWriter::open(path);
    if (!writer.ok()) ::_exit(2);
    writer->append_thread_name(1, "before-kill");
    ::raise(SIGKILL);
    ::_exit(3);
  }
  ASSERT_EQ(wait_child(pid), 128 + SIGKILL);
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(thread_names(*reader), std::vector<std::string>{"before-kill"});
  EXPECT_FALSE(reader->stats().end_seen);
}

TEST(SpoolWriterContract, NothingAllocatesAfterOpen) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  std::vector<unsigned char> records(4096, 0x5A);
  std::vector<StringEntry> strings(100, StringEntry{7, "some_kernel_name"});
  std::vector<DropCounter> drops(40, DropCounter{1, 2});
  static std::vector<std::string> escaped;  // a control: the counter must see this one
  testing::count_allocations(true);
  escaped.emplace_back(100, 'x');
  ASSERT_GE(testing::count_allocations(false), 1) << "the allocation counter is not wired in";
  testing::count_allocations(true);
  bool ok = writer->append_cupti_buffer(1, records.data(), records.size()) &&
            writer->append_strings(strings) && writer->append_drop_counters(drops) &&
            writer->append_thread_name(1, "main") &&
            writer->append_process_info(1, 2, "/bin/true", std::string_view("true\0", 5)) &&
            writer->close();
  int allocations = testing::count_allocations(false);
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations, 0);
}

TEST(SpoolFork, ConcurrentAppendersInterleaveWholeChunks) {
  TempDir dir;
  std::string path = dir.file("spool.bin");
  auto writer = SpoolWriter::open(path);
  ASSERT_TRUE(writer.ok());
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string name = "thread-" + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i)
        writer->append_thread_name(static_cast<uint32_t>(t), name);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(writer->close());
  auto reader = SpoolReader::open(path);
  ASSERT_TRUE(reader.ok());
  std::vector<int> per_thread(kThreads);
  Chunk chunk;
  while (reader->next(&chunk)) {
    auto t = decode_thread_name(chunk.payload);
    ASSERT_TRUE(t.ok());
    ASSERT_LT(t->tid, static_cast<uint32_t>(kThreads));
    EXPECT_EQ(t->name, "thread-" + std::to_string(t->tid));
    ++per_thread[t->tid];
  }
  for (int n : per_thread) EXPECT_EQ(n, kPerThread);
  EXPECT_TRUE(reader->stats().intact());
  EXPECT_EQ(reader->stats().end->chunks_written, uint64_t{kThreads} * kPerThread);
}

}  // namespace
}  // namespace strata::format
