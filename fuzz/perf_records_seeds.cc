// Writes the seed inputs of fuzz/corpus/perf_records/ (the layout is
// perf_records_fuzzer.cc's: sample_type, regs mask, control, then records),
// built with the parser tests' record builder so the seeds are real kernel
// layouts: a DWARF-mode buffer, a frame-pointer buffer, and one of every
// non-sample record. Not part of the build; to regenerate:
//   g++ -std=c++20 -Isrc -Itests/sampler fuzz/perf_records_seeds.cc -o /tmp/seeds
//   /tmp/seeds fuzz/corpus/perf_records
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "record_builder.h"

using namespace strata::sampler;
using namespace strata::sampler::testing;

namespace {

void write_seed(const std::string& path, const SampleLayout& layout, uint64_t control,
                const std::vector<uint8_t>& records) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::perror(path.c_str());
    std::exit(1);
  }
  uint64_t head[3] = {layout.sample_type, layout.sample_regs_user,
                      control | (layout.sample_id_all ? 1u : 0u)};
  std::fwrite(head, sizeof head, 1, f);
  std::fwrite(records.data(), 1, records.size(), f);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  {
    RecordWriter w;
    w.comm(100, 100, "cpu_hotspot", true, 10);
    w.mmap2_inode(100, 100, 0x400000, 0x2000, 0, 42, "/usr/bin/cpu_hotspot", 11);
    w.mmap2_build_id(100, 0x7f0000000000, {1, 2, 3, 4, 5, 6, 7, 8}, "/lib/libc.so.6", 12);
    std::vector<uint64_t> regs(std::popcount(kDwarfRegsMask), 0);
    regs[0] = 0x7ffc0000;
    w.dwarf_sample(0x401000, 100, 100, 20, 0, 1000000, regs, {1, 2, 3, 4, 5, 6, 7, 8}, 64);
    w.dwarf_sample(0x401010, 100, 101, 21, 1, 1000000, {}, {}, 0);
    w.task(true, 100, 100, 101, 100, 15);
    w.task(false, 100, 100, 101, 100, 30);
    // The ring view: the second half of the records, wrapped.
    write_seed(dir + "/dwarf", dwarf_layout(), (uint64_t{96} << 8) | (uint64_t{256} << 32),
               w.bytes());
  }
  {
    RecordWriter w;
    w.mmap1(200, 0x400000, 0x1000, "/usr/bin/python3", 1);
    w.fp_sample(0x400100, 200, 200, 2, {0xfffffffffffffe00, 0x400100, 0x400200, 0x400300});
    w.fp_sample(0x400104, 200, 200, 3, {});
    w.lost(7, 3);
    w.lost_samples(2);
    w.throttle(true, 4, 0);
    w.throttle(false, 5, 0);
    write_seed(dir + "/fp", fp_layout(), uint64_t{64} << 32, w.bytes());
  }
  return 0;
}
