// The one chunk loop (import/chunk_visitor.h): every kind reaches its
// handler decoded, in file order; kinds a visitor does not want are never
// decoded; a payload that does not decode is reported and skipped; a
// handler's error stops the loop. And list_spools, the one spool lister.
#include "import/chunk_visitor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "format/byte_order.h"
#include "format/spool_writer.h"
#include "import/spool_files.h"
#include "util/temp_dir.h"

namespace strata::import {
namespace {

using format::ChunkKind;

// Records what it was handed, as "kind:detail" lines.
class Recorder : public ChunkVisitor {
 public:
  explicit Recorder(std::set<ChunkKind> wanted) : wanted_(std::move(wanted)) {}
  bool wants(ChunkKind kind) const override { return wanted_.count(kind) > 0; }
  Status on_cupti_buffer(const format::Chunk&, const format::CuptiBuffer& b) override {
    return add("cupti:" + std::to_string(b.cupti_version) + "/" + std::to_string(b.records.size()));
  }
  Status on_strings(const std::vector<format::StringEntry>& s) override {
    return add("strings:" + std::string(s.at(0).text));
  }
  Status on_drop_counters(const std::vector<format::DropCounter>& d) override {
    return add("drops:" + std::to_string(d.at(0).total));
  }
  Status on_thread_name(const format::ThreadName& t) override {
    return add("thread:" + std::string(t.name));
  }
  Status on_process_info(const format::ProcessInfo& p) override {
    return add("process:" + std::string(p.exe));
  }
  Status on_kernel_metrics(const format::KernelMetrics& k) override {
    return add("metrics:" + std::string(k.kernel_name));
  }
  Status on_kernels_seen(const std::vector<format::KernelSeen>& k) override {
    return add("seen:" + std::string(k.at(0).name));
  }
  Status on_instrument_events(const format::InstrumentEvents& e) override {
    return add("events:" + std::to_string(e.tid) + "/" + std::to_string(e.word_count()));
  }
  Status on_memory_map(const format::MemoryMap& m) override {
    return add("maps:" + std::string(m.text));
  }
  Status on_sampler_samples(const format::SamplerSamples& s) override {
    return add("samples:" + std::to_string(s.tid) + "/" + std::to_string(s.samples.size()));
  }
  Status on_sampler_counters(const format::SamplerCounters& c) override {
    return add("counters:" + std::to_string(c.hz));
  }
  void on_malformed(const format::Chunk& chunk, const Error&) override {
    seen.push_back(std::string("malformed:") +
                   format::chunk_kind_name(static_cast<uint32_t>(chunk.kind)));
  }

  std::vector<std::string> seen;
  std::string fail_on;  // a handler whose line starts so returns an error

 private:
  Status add(std::string line) {
    seen.push_back(line);
    if (!fail_on.empty() && line.rfind(fail_on, 0) == 0) return make_error("stop at " + line);
    return Ok{};
  }
  std::set<ChunkKind> wanted_;
};

std::set<ChunkKind> every_kind() {
  std::set<ChunkKind> all;
  for (const auto& entry : format::kChunkKindNames) all.insert(static_cast<ChunkKind>(entry.value));
  return all;
}

// One chunk of every kind a producer writes, then a thread-name chunk too
// short to decode.
std::string write_every_kind(const std::string& dir) {
  std::string path = dir + "/spool-1.bin";
  auto w = format::SpoolWriter::open(path);
  EXPECT_TRUE(w) << w.error().message;
  const uint64_t records[2] = {1, 2};
  w->append_cupti_buffer(130000, records, sizeof records);
  format::StringEntry s{1, "hello"};
  w->append_strings({&s, 1});
  format::DropCounter d{1, 7};
  w->append_drop_counters({&d, 1});
  w->append_thread_name(11, "worker");
  w->append_process_info(1, 0, "/bin/prog", std::string("prog\0", 5));
  format::KernelMetricsHeader h;
  w->append_kernel_metrics(h, "_Z4axpy", {});
  format::KernelSeen k{3, "_Z4axpy"};
  w->append_kernels_seen({&k, 1});
  std::vector<std::byte> events(format::kInstrumentEventsPrefix + 16);
  format::store_le32(events.data(), 12);
  format::store_le32(events.data() + 4, static_cast<uint32_t>(format::InstrumentClock::kMonotonic));
  w->append(ChunkKind::kInstrumentEvents, events.data(), events.size());
  std::string maps = "00400000-00401000 r-xp 00000000 08:01 1 /bin/prog\n";
  std::vector<std::byte> map(format::kMemoryMapPrefix + maps.size());
  std::memcpy(map.data() + format::kMemoryMapPrefix, maps.data(), maps.size());
  w->append(ChunkKind::kMemoryMap, map.data(), map.size());
  std::vector<std::byte> samples(format::kSamplerSamplesPrefix);
  format::store_le32(samples.data(), 13);
  w->append(ChunkKind::kSamplerSamples, samples.data(), samples.size());
  std::vector<std::byte> counters(format::kSamplerCountersPrefix + 8);
  format::store_le32(counters.data(), 997);
  w->append(ChunkKind::kSamplerCounters, counters.data(), counters.size());
  w->append(ChunkKind::kThreadName, "abc", 3);  // shorter than its 8-byte prefix
  w->close();
  return path;
}

TEST(ChunkVisitorTest, EveryKindReachesItsHandlerInFileOrder) {
  test_util::TempDir dir("strata-import-test");
  auto reader = format::SpoolReader::open(write_every_kind(dir.path().string()));
  ASSERT_TRUE(reader) << reader.error().message;
  Recorder all(every_kind());
  ASSERT_TRUE(visit_chunks(*reader, all));
  const std::vector<std::string> expected = {
      "cupti:130000/16",
      "strings:hello",
      "drops:7",
      "thread:worker",
      "process:/bin/prog",
      "metrics:_Z4axpy",
      "seen:_Z4axpy",
      "events:12/2",
      "maps:00400000-00401000 r-xp 00000000 08:01 1 /bin/prog\n",
      "samples:13/0",
      "counters:997",
      "malformed:thread-name",
  };
  EXPECT_EQ(all.seen, expected);
  EXPECT_TRUE(reader->stats().clean_end);
}

TEST(ChunkVisitorTest, UnwantedKindsAreNeitherDecodedNorReported) {
  test_util::TempDir dir("strata-import-test");
  auto reader = format::SpoolReader::open(write_every_kind(dir.path().string()));
  ASSERT_TRUE(reader);
  Recorder some({ChunkKind::kMemoryMap, ChunkKind::kSamplerCounters});
  ASSERT_TRUE(visit_chunks(*reader, some));
  const std::vector<std::string> expected = {
      "maps:00400000-00401000 r-xp 00000000 08:01 1 /bin/prog\n", "counters:997"};
  EXPECT_EQ(some.seen, expected);  // no malformed thread-name: it was not wanted
}

TEST(ChunkVisitorTest, AHandlerErrorStopsTheLoop) {
  test_util::TempDir dir("strata-import-test");
  auto reader = format::SpoolReader::open(write_every_kind(dir.path().string()));
  ASSERT_TRUE(reader);
  Recorder all(every_kind());
  all.fail_on = "thread:";
  Status st = visit_chunks(*reader, all);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "stop at thread:worker");
  EXPECT_EQ(all.seen.back(), "thread:worker");
  EXPECT_EQ(all.seen.size(), 4u);
}

TEST(SpoolFilesTest, ListsOneProducersSpoolsSorted) {
  test_util::TempDir dir("strata-import-test");
  for (const char* name : {"spool-20.bin", "spool-3.bin", "spool-.bin", "spool-4.txt",
                           "instrument-5.bin", "sigprof-6.1.bin"}) {
    std::ofstream(dir.path().string() + "/" + name) << "x";
  }
  ASSERT_EQ(mkdir((dir.path().string() + "/spool-7.bin").c_str(), 0700), 0);  // not a regular file
  // A link to a regular file, as a target could plant one: not followed.
  ASSERT_EQ(symlink((dir.path().string() + "/spool-3.bin").c_str(),
                    (dir.path().string() + "/spool-8.bin").c_str()),
            0);
  const std::string d = dir.path().string() + "/";
  EXPECT_EQ(list_spools(dir.path().string(), kAgentSpoolPrefix),
            (std::vector<std::string>{d + "spool-20.bin", d + "spool-3.bin"}));
  EXPECT_EQ(list_spools(dir.path().string(), kInstrumentSpoolPrefix),
            (std::vector<std::string>{d + "instrument-5.bin"}));
  EXPECT_EQ(list_spools(dir.path().string(), kSigprofSpoolPrefix),
            (std::vector<std::string>{d + "sigprof-6.1.bin"}));
  EXPECT_TRUE(list_spools(dir.path().string() + "/missing", kAgentSpoolPrefix).empty());
}

}  // namespace
}  // namespace strata::import
