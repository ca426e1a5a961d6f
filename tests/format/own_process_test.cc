// format/own_process.h: the process-info and memory-map chunks every
// producer writes about itself, read back; and the promise that lets them
// run after fork and in signal handlers: no heap allocation.
#include "format/own_process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "format/payloads.h"
#include "spool_test_util.h"

namespace strata::format {
namespace {

using testing::count_allocations;
using testing::TempDir;

TEST(OwnProcessTest, ProcessInfoAndMemoryMapReadBack) {
  TempDir dir;
  {
    auto writer = SpoolWriter::open(dir.file("own.bin"));
    ASSERT_TRUE(writer) << writer.error().message;
    count_allocations(true);
    EXPECT_TRUE(append_own_process_info(*writer));
    EXPECT_TRUE(append_own_memory_map(*writer));
    EXPECT_EQ(count_allocations(false), 0);
    writer->close();
  }
  auto reader = SpoolReader::open(dir.file("own.bin"));
  ASSERT_TRUE(reader) << reader.error().message;
  Chunk chunk;
  ASSERT_TRUE(reader->next(&chunk));
  ASSERT_EQ(chunk.kind, ChunkKind::kProcessInfo);
  auto info = decode_process_info(chunk.payload);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(info->ppid, static_cast<uint32_t>(getppid()));
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
  ASSERT_GT(n, 0);
  EXPECT_EQ(info->exe, std::string_view(exe, static_cast<size_t>(n)));
  ASSERT_FALSE(info->args.empty());
  EXPECT_NE(std::string(info->args[0]).find("format_tests"), std::string::npos);

  ASSERT_TRUE(reader->next(&chunk));
  ASSERT_EQ(chunk.kind, ChunkKind::kMemoryMap);
  auto map = decode_memory_map(chunk.payload);
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_GT(map->time_ns, 0);
  EXPECT_NE(map->text.find("[stack]"), std::string_view::npos);
  EXPECT_NE(map->text.find("format_tests"), std::string_view::npos);
  EXPECT_FALSE(reader->next(&chunk));
  EXPECT_TRUE(reader->stats().intact());
}

TEST(OwnProcessTest, ProcFileReadsWholeFilesAndFailsCleanly) {
  ProcFile file;
  ASSERT_TRUE(read_proc_file("/proc/self/maps", &file));
  EXPECT_GT(file.size, 0u);
  EXPECT_GE(file.capacity, file.size);
  release_proc_file(&file);
  EXPECT_EQ(file.data, nullptr);
  EXPECT_FALSE(read_proc_file("/nonexistent/strata", &file));
  EXPECT_EQ(file.data, nullptr);
  EXPECT_EQ(file.size, 0u);
}

TEST(OwnProcessTest, ALongCommandLineIsCutAfterTheLastWholeArgument) {
  TempDir dir;
  ProcFile cmdline;
  ASSERT_TRUE(read_proc_file("/proc/self/cmdline", &cmdline));
  const std::string argv0(cmdline.data);  // up to its NUL
  release_proc_file(&cmdline);
  {
    auto writer = SpoolWriter::open(dir.file("cut.bin"));
    ASSERT_TRUE(writer);
    EXPECT_TRUE(append_own_process_info(*writer, argv0.size() + 2));  // argv0, NUL, 1 byte more
    EXPECT_TRUE(append_own_process_info(*writer, 1));
    writer->close();
  }
  auto reader = SpoolReader::open(dir.file("cut.bin"));
  ASSERT_TRUE(reader);
  Chunk chunk;
  ASSERT_TRUE(reader->next(&chunk));
  auto first = decode_process_info(chunk.payload);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->args.size(), 1u);
  EXPECT_EQ(first->args[0], argv0);
  ASSERT_TRUE(reader->next(&chunk));
  auto second = decode_process_info(chunk.payload);
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->args.empty());
}

}  // namespace
}  // namespace strata::format
