// Randomized mutations of a real small trace: flipped bytes, overwritten runs
// and truncations. TraceReader must answer each with a value or an error and
// never crash, hang or write to the file. Seeded, so a failure reproduces.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "store/trace_db.h"
#include "test_util.h"

namespace strata::store {
namespace {

constexpr int kMutations = 300;

std::string mutate(const std::string& original, std::mt19937_64& rng) {
  std::string bytes = original;
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  switch (pick(4)) {
    case 0: {  // a few flipped bits anywhere, the header included
      int flips = 1 + static_cast<int>(pick(8));
      for (int i = 0; i < flips; ++i) bytes[pick(bytes.size())] ^= static_cast<char>(1 << pick(8));
      break;
    }
    case 1: {  // bytes in the first page: header, schema table
      int writes = 1 + static_cast<int>(pick(16));
      size_t limit = std::min<size_t>(bytes.size(), 4096);
      for (int i = 0; i < writes; ++i) bytes[pick(limit)] = static_cast<char>(pick(256));
      break;
    }
    case 2: {  // a run of random bytes
      size_t at = pick(bytes.size());
      size_t len = std::min(bytes.size() - at, 1 + pick(512));
      for (size_t i = 0; i < len; ++i) bytes[at + i] = static_cast<char>(pick(256));
      break;
    }
    default:  // truncation
      bytes.resize(pick(bytes.size()));
      break;
  }
  return bytes;
}

TEST(Mutation, ReaderSurvivesDamagedTraces) {
  testing::TempDir dir;
  std::string original_path = dir.file("original.sqlite");
  testing::write_sample_trace(original_path, 200);
  const std::string original = testing::read_bytes(original_path);
  ASSERT_GT(original.size(), 4096u);

  std::mt19937_64 rng(20261201);
  std::string path = dir.file("mutant.sqlite");
  int opened = 0, refused = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int i = 0; i < kMutations; ++i) {
    std::string bytes = mutate(original, rng);
    testing::write_bytes(path, bytes);
    SCOPED_TRACE(::testing::Message() << "mutation " << i);
    auto reader = TraceReader::open(path);
    if (!reader.ok()) {
      ++refused;
      EXPECT_EQ(reader.error().message.find('\n'), std::string::npos);
      EXPECT_EQ(reader.error().message.rfind(path + ": ", 0), 0u) << reader.error().message;
    } else {
      ++opened;
      auto tables = reader->tables();
      if (!tables.ok()) {
        EXPECT_EQ(tables.error().message.find('\n'), std::string::npos);
      }
      (void)reader->run();
      (void)reader->bench_runs();
      (void)reader->kernels();
      (void)reader->counters();
    }
    EXPECT_EQ(testing::read_bytes(path), bytes) << "the reader wrote to the file";
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "mutation test is too slow";
  }
  // Both outcomes must occur, or the mutations are not exercising anything.
  EXPECT_GT(opened, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace strata::store
