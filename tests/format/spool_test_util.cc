// See spool_test_util.h.
#include "spool_test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace strata::format::testing {

std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void write_file(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<ReadChunk> read_all(SpoolReader& reader) {
  std::vector<ReadChunk> out;
  Chunk chunk;
  while (reader.next(&chunk)) {
    out.push_back({chunk.kind, {chunk.payload.begin(), chunk.payload.end()}, chunk.offset});
  }
  return out;
}

std::vector<std::byte> write_sample_spool(const std::string& path, size_t cupti_records) {
  auto writer = SpoolWriter::open(path);
  EXPECT_TRUE(writer.ok()) << writer.error().message;
  std::vector<unsigned char> records(cupti_records);
  for (size_t i = 0; i < records.size(); ++i) records[i] = static_cast<unsigned char>(i * 7 + 1);
  StringEntry strings[] = {{1, "_Z6matmulPfS_S_i"}, {2, "cudaLaunchKernel"}, {3, ""}};
  DropCounter drops[] = {{static_cast<uint32_t>(DropCounterKind::kCuptiRecords), 17},
                         {static_cast<uint32_t>(DropCounterKind::kBuffersUnavailable), 2}};
  EXPECT_TRUE(writer->append_process_info(1234, 1, kSampleExe, kSampleCmdline));
  EXPECT_TRUE(writer->append_thread_name(kSampleTid, kSampleThreadName));
  EXPECT_TRUE(writer->append_strings(strings));
  EXPECT_TRUE(writer->append_cupti_buffer(kSampleCuptiVersion, records.data(), records.size()));
  EXPECT_TRUE(writer->append_drop_counters(drops));
  EXPECT_TRUE(writer->close());
  return read_file(path);
}

}  // namespace strata::format::testing
