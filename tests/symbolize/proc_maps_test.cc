// symbolize::parse_proc_maps, the one /proc/PID/maps parser, on the line
// shapes the kernel writes and on damaged ones; and the AddressSpace it gives.
#include "symbolize/proc_maps.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "symbolize/symbolizer.h"

namespace strata::symbolize {
namespace {

const char* kMaps =
    "55d0c0a00000-55d0c0a01000 r--p 00000000 fe:01 1234                       /usr/bin/prog\n"
    "55d0c0a01000-55d0c0a05000 r-xp 00001000 fe:01 1234                       /usr/bin/prog\n"
    "7f0000200000-7f0000300000 rw-s 00000000 00:05 77 /dev/shm/x (deleted)\n"
    "7f0000400000-7f0000500000 rw-p 00000000 00:00 0 \n"
    "\n"
    "garbage line\n"
    "7ffd00002000-7ffd00001000 r-xp 00000000 00:00 0 [backwards]\n"
    "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]";

TEST(ProcMapsTest, ParsesEveryFieldAndCountsBadLines) {
  uint64_t bad = 0;
  std::vector<MapsLine> lines = parse_proc_maps(kMaps, &bad);
  EXPECT_EQ(bad, 2u);  // garbage, end before start; the empty line is no line
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1].start, 0x55d0c0a01000u);
  EXPECT_EQ(lines[1].end, 0x55d0c0a05000u);
  EXPECT_EQ(lines[1].pgoff, 0x1000u);
  EXPECT_EQ(lines[1].dev_major, 0xfeu);
  EXPECT_EQ(lines[1].dev_minor, 1u);
  EXPECT_EQ(lines[1].inode, 1234u);
  EXPECT_EQ(lines[1].path, "/usr/bin/prog");
  EXPECT_TRUE(lines[1].readable());
  EXPECT_TRUE(lines[1].executable());
  EXPECT_FALSE(lines[1].writable());
  EXPECT_FALSE(lines[0].executable());
  EXPECT_TRUE(lines[2].shared());
  EXPECT_TRUE(lines[2].writable());
  EXPECT_EQ(lines[2].path, "/dev/shm/x (deleted)");
  EXPECT_EQ(lines[3].path, "");        // anonymous
  EXPECT_EQ(lines[4].path, "[vdso]");  // the last line needs no newline
  EXPECT_EQ(parse_proc_maps("").size(), 0u);
}

TEST(ProcMapsTest, AddressSpaceKeepsOrderAndExecutability) {
  AddressSpace space = address_space_from_maps(42, kMaps);
  EXPECT_EQ(space.pid, 42);
  ASSERT_EQ(space.mappings.size(), 5u);
  EXPECT_FALSE(space.mappings[0].executable);
  EXPECT_TRUE(space.mappings[1].executable);
  EXPECT_EQ(space.mappings[1].start, 0x55d0c0a01000u);
  EXPECT_EQ(space.mappings[1].end, 0x55d0c0a05000u);
  EXPECT_EQ(space.mappings[1].pgoff, 0x1000u);
  EXPECT_EQ(space.mappings[1].path, "/usr/bin/prog");
}

TEST(ProcMapsTest, OwnMapsParseWholeAndMatchReadProcMaps) {
  std::ifstream in("/proc/self/maps");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t bad = 0;
  auto lines = parse_proc_maps(text, &bad);
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(lines.size(), 5u);
  auto space = read_proc_maps(0);
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->pid, static_cast<int>(getpid()));
  EXPECT_GT(space->mappings.size(), 5u);
}

TEST(ProcMapsTest, MutatedTextNeverReadsPastALine) {
  std::mt19937_64 rng(17);
  const std::string original = kMaps;
  for (int i = 0; i < 5000; ++i) {
    std::string text = original;
    for (int e = 0; e < 4; ++e) text[rng() % text.size()] = static_cast<char>(rng());
    text.resize(rng() % (text.size() + 1));
    for (const MapsLine& line : parse_proc_maps(text)) {
      ASSERT_LE(line.start, line.end);
      ASSERT_LE(line.path.size(), text.size());
    }
  }
}

}  // namespace
}  // namespace strata::symbolize
