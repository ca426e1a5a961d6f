#include "import/cpu/address_spaces.h"

#include <gtest/gtest.h>

namespace strata::import {
namespace {

sampler::Mapping mapping(uint32_t pid, uint64_t addr, uint64_t len, const std::string& file,
                         uint32_t prot) {
  sampler::Mapping m;
  m.pid = pid;
  m.tid = pid;
  m.addr = addr;
  m.len = len;
  m.pgoff = 0x1000;
  m.prot = prot;
  m.filename = file;
  return m;
}

sampler::Sample sample(uint32_t pid) {
  sampler::Sample s;
  s.pid = pid;
  s.tid = pid;
  return s;
}

TEST(HexBuildId, LowercaseHexOfTheRecordedBytes) {
  sampler::Mapping m;
  m.has_build_id = true;
  m.build_id_size = 4;
  m.build_id = {0xde, 0xad, 0x0b, 0xef, 0x55};  // the fifth byte is past the size
  EXPECT_EQ(hex_build_id(m), "dead0bef");
  m.build_id_size = 0;
  EXPECT_EQ(hex_build_id(m), "");
  m.build_id_size = 200;  // a bad record: never past the 20 bytes kept
  EXPECT_EQ(hex_build_id(m).size(), 40u);
}

TEST(AddressSpaces, MappingsOfEachSampledProcess) {
  sampler::RawProfile raw;
  auto code = mapping(10, 0x400000, 0x2000, "/bin/prog", 0x5);  // r-x
  code.has_build_id = true;
  code.build_id_size = 2;
  code.build_id[0] = 0xab;
  code.build_id[1] = 0x01;
  raw.mmaps[10] = {code, mapping(10, 0x600000, 0x1000, "/bin/prog", 0x1),  // r--
                   mapping(10, 0x700000, 0x1000, "/lib/old.so", 0x0)};     // MMAP: no prot
  raw.mmaps[99] = {mapping(99, 0x1000, 0x1000, "/bin/unsampled", 0x5)};
  raw.samples = {sample(10), sample(10)};

  auto spaces = address_spaces(raw);
  ASSERT_EQ(spaces.size(), 1u);  // pid 99 has no samples
  const symbolize::AddressSpace& space = spaces.at(10);
  EXPECT_EQ(space.pid, 10);
  ASSERT_EQ(space.mappings.size(), 3u);
  EXPECT_EQ(space.mappings[0].start, 0x400000u);
  EXPECT_EQ(space.mappings[0].end, 0x402000u);
  EXPECT_EQ(space.mappings[0].pgoff, 0x1000u);
  EXPECT_EQ(space.mappings[0].path, "/bin/prog");
  EXPECT_EQ(space.mappings[0].build_id, "ab01");
  EXPECT_TRUE(space.mappings[0].executable);
  EXPECT_EQ(space.mappings[1].build_id, "");
  EXPECT_FALSE(space.mappings[1].executable);
  EXPECT_TRUE(space.mappings[2].executable);  // unknown protection counts as code
}

TEST(AddressSpaces, ForkedChildrenStartFromTheirAncestorsMappings) {
  sampler::RawProfile raw;
  raw.mmaps[10] = {mapping(10, 0x1000, 0x1000, "/bin/shell", 0x5)};
  raw.mmaps[20] = {mapping(20, 0x2000, 0x1000, "/bin/child", 0x5)};
  raw.mmaps[30] = {mapping(30, 0x3000, 0x1000, "/bin/grandchild", 0x5)};
  sampler::TaskEvent fork_20{true, 0, 20, 10, 20, 10};
  sampler::TaskEvent fork_30{true, 0, 30, 20, 30, 20};
  sampler::TaskEvent thread_of_30{true, 0, 30, 30, 31, 30};  // a thread, not a process
  sampler::TaskEvent exit_40{false, 0, 40, 10, 40, 10};      // an exit is no parentage
  raw.tasks = {fork_20, fork_30, thread_of_30, exit_40};
  raw.mmaps[40] = {mapping(40, 0x4000, 0x1000, "/bin/other", 0x5)};
  raw.samples = {sample(30), sample(40), sample(50)};

  auto spaces = address_spaces(raw);
  ASSERT_EQ(spaces.size(), 3u);
  std::vector<std::string> paths;
  for (const auto& m : spaces.at(30).mappings) paths.push_back(m.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/bin/shell", "/bin/child", "/bin/grandchild"}));
  ASSERT_EQ(spaces.at(40).mappings.size(), 1u);
  EXPECT_EQ(spaces.at(40).mappings[0].path, "/bin/other");
  EXPECT_TRUE(spaces.at(50).mappings.empty());  // sampled, but no records: still a space
}

TEST(AddressSpaces, AForkLoopInBadRecordsEnds) {
  sampler::RawProfile raw;
  raw.tasks = {{true, 0, 1, 2, 1, 2}, {true, 0, 2, 1, 2, 1}};
  raw.mmaps[1] = {mapping(1, 0x1000, 0x1000, "/bin/a", 0x5)};
  raw.mmaps[2] = {mapping(2, 0x2000, 0x1000, "/bin/b", 0x5)};
  raw.samples = {sample(1)};
  auto spaces = address_spaces(raw);
  EXPECT_EQ(spaces.at(1).mappings.size(), 64u);  // the chain stops at 64 processes
}

}  // namespace
}  // namespace strata::import
