// The spool reader (src/format/spool_reader) and the import layer's readers
// it feeds, on arbitrary bytes: the one chunk loop with a visitor that takes
// every kind and touches every byte each decoder hands out (ASan sees a view
// past the payload), then the in-process sampler's reader (add_sigprof_spool,
// read_sigprof_dir), the instrument reader (read_instrument_spools) and,
// where the build has CUPTI's headers, the CUPTI ingest into a trace
// database (ingest_spools) and the PyTorch op ingest (ingest_torch_spools).
// Nothing may crash, and the reader's counters must
// add up; a broken promise aborts (a crash to libFuzzer and the replay test).
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "format/spool_reader.h"
#include "fuzz_files.h"
#include "import/chunk_visitor.h"
#include "import/instrument_profile.h"
#include "import/sigprof_spool.h"
#include "sampler/sampler.h"
#ifdef STRATA_FUZZ_CUPTI_INGEST
#include "import/cupti_ingest.h"
#include "import/torch_ops_ingest.h"
#include "store/trace_db.h"
#endif

namespace {

using namespace strata;

void expect(bool ok) {
  if (!ok) std::abort();
}

// Takes every kind and reads every byte of what the decoders return.
class TouchAll : public import::ChunkVisitor {
 public:
  uint64_t sum = 0;
  uint64_t chunks = 0;

  bool wants(format::ChunkKind) const override { return true; }
  Status on_cupti_buffer(const format::Chunk& chunk, const format::CuptiBuffer& b) override {
    // Chunk's promise: payloads are 8-byte aligned, copied when damage moved them.
    expect(reinterpret_cast<uintptr_t>(chunk.payload.data()) % 8 == 0);
    touch(b.records);
    return counted();
  }
  Status on_strings(const std::vector<format::StringEntry>& v) override {
    for (const auto& e : v) touch(e.text);
    return counted();
  }
  Status on_drop_counters(const std::vector<format::DropCounter>& v) override {
    for (const auto& d : v) sum += d.total;
    return counted();
  }
  Status on_thread_name(const format::ThreadName& t) override {
    touch(t.name);
    return counted();
  }
  Status on_process_info(const format::ProcessInfo& p) override {
    touch(p.exe);
    for (auto a : p.args) touch(a);
    return counted();
  }
  Status on_kernel_metrics(const format::KernelMetrics& m) override {
    touch(m.kernel_name);
    for (const auto& v : m.metrics) touch(v.name);
    return counted();
  }
  Status on_kernels_seen(const std::vector<format::KernelSeen>& v) override {
    for (const auto& k : v) touch(k.name);
    return counted();
  }
  Status on_instrument_events(const format::InstrumentEvents& e) override {
    touch(e.words);
    return counted();
  }
  Status on_memory_map(const format::MemoryMap& m) override {
    touch(m.text);
    return counted();
  }
  Status on_sampler_samples(const format::SamplerSamples& s) override {
    for (const auto& v : s.samples) touch(v.stack);
    return counted();
  }
  Status on_sampler_counters(const format::SamplerCounters& c) override {
    for (uint64_t t : c.totals) sum += t;
    return counted();
  }
  void on_malformed(const format::Chunk& chunk, const Error&) override {
    touch(chunk.payload);
    chunks++;
  }

 private:
  Status counted() {
    chunks++;
    return Ok{};
  }
  void touch(std::string_view s) {
    for (char c : s) sum += static_cast<uint8_t>(c);
  }
  void touch(std::span<const std::byte> s) {
    for (std::byte b : s) sum += static_cast<uint8_t>(b);
  }
};

void visit_all(const uint8_t* data, size_t size) {
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  auto reader = format::SpoolReader::from_bytes(std::move(bytes), "fuzz.bin");
  if (!reader) return;
  TouchAll visitor;
  Status status = import::visit_chunks(*reader, visitor);
  expect(status.ok());  // TouchAll never fails a chunk
  const format::SpoolStats& st = reader->stats();
  // Chunks handed out or malformed were all CRC-valid chunks of known kinds.
  expect(visitor.chunks + st.unknown_kinds <= st.chunks_ok);
  expect(st.skipped_bytes + st.truncated_bytes <= size);
  expect(st.payload_bytes <= size);
}

void sigprof(const std::string& path, const std::string& dir) {
  auto reader = format::SpoolReader::open(path);
  if (reader) {
    sampler::RawProfile profile;
    profile.period_ns = 1'000'000;
    profile.regs_per_sample = format::kSamplerRegsPerSample;
    profile.regs_mask = sampler::kDwarfRegsMask;
    import::SpoolSummary summary = import::add_sigprof_spool(*reader, &profile);
    expect(summary.samples == profile.samples.size());
  }
  sampler::SamplerOptions options;
  sampler::RawProfile merged = import::read_sigprof_dir(dir, options);
  (void)merged;
}

#ifdef STRATA_FUZZ_CUPTI_INGEST
void ingest(const std::string& path) {
  auto writer = store::TraceWriter::create(fuzz::scratch_dir() + "/ingest.sqlite", true);
  expect(writer.ok());
  auto stats = import::ingest_spools({path}, *writer);
  expect(stats.ok());  // damage is counted, never an error
}

// libstrata_torch's spools: the run directory's torch-*.bin.
void ingest_torch(const std::string& dir) {
  auto writer = store::TraceWriter::create(fuzz::scratch_dir() + "/torch.sqlite", true);
  expect(writer.ok());
  auto summary = import::ingest_torch_spools(dir, *writer);
  expect(summary.ok());  // damage is counted, never an error
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  visit_all(data, size);
  // The readers that take files: one name each reader lists its spools by.
  const std::string path = fuzz::write_input("sigprof-1.bin", data, size);
  sigprof(path, fuzz::scratch_dir());
  import::InstrumentedProfile instrumented = import::read_instrument_spools({path});
  expect(instrumented.counters.spools + instrumented.counters.unreadable_spools == 1);
#ifdef STRATA_FUZZ_CUPTI_INGEST
  ingest(path);
  fuzz::write_input("torch-1.bin", data, size);
  ingest_torch(fuzz::scratch_dir());
#endif
  return 0;
}
