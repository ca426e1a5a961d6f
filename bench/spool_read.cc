// Spool throughput: CRC-32 alone, the writer, and the reader over a spool
// in the page cache, in MB/s and chunks/s (medians of several runs). The
// CLI must ingest >= 1M CUPTI records/s on one core; at ~200 bytes a record
// that is ~200 MB/s, so the reader's figure is printed as a ratio to it.
// Two shapes: 4 MiB CUPTI-buffer chunks (what the agent writes) and 64-byte
// chunks (per-chunk overhead, the worst case).
//
// usage: spool_read [MIB [RUNS]]   (default 128 5)
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "format/crc32.h"
#include "format/spool_reader.h"
#include "format/spool_writer.h"

namespace {

using Clock = std::chrono::steady_clock;
using strata::format::Chunk;
using strata::format::SpoolReader;
using strata::format::SpoolWriter;

constexpr double kMB = 1e6;
constexpr double kNeededMBps = 200.0;  // 1M records/s x ~200 B per CUPTI record

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string temp_path(const char* name) {
  const char* base = getenv("TMPDIR");
  return std::string(base && *base ? base : "/tmp") + "/" + name + "-" + std::to_string(getpid()) +
         ".bin";
}

struct ReadFigures {
  double seconds;
  uint64_t chunks;
  uint64_t bytes;
};

ReadFigures read_spool(const std::string& path) {
  auto start = Clock::now();
  auto reader = SpoolReader::open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "spool_read: %s\n", reader.error().message.c_str());
    exit(1);
  }
  Chunk chunk;
  uint64_t chunks = 0, sink = 0;
  while (reader->next(&chunk)) {
    ++chunks;
    sink += static_cast<uint64_t>(chunk.payload.back());  // touch the payload like a parser would
  }
  double s = seconds_since(start);
  if (!reader->stats().intact() || sink == 1) {
    std::fprintf(stderr, "spool_read: %s did not read back intact\n", path.c_str());
    exit(1);
  }
  return {s, chunks, reader->size()};
}

// Writes `total` bytes of payload in chunks of `chunk_size`; returns seconds.
double write_spool(const std::string& path, size_t total, size_t chunk_size) {
  unlink(path.c_str());
  std::vector<unsigned char> payload(chunk_size);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<unsigned char>(i * 131 + 7);
  auto start = Clock::now();
  auto writer = SpoolWriter::open(path);
  if (!writer.ok()) {
    std::fprintf(stderr, "spool_read: %s\n", writer.error().message.c_str());
    exit(1);
  }
  for (size_t done = 0; done < total; done += chunk_size) {
    bool ok = chunk_size >= 1024
                  ? writer->append_cupti_buffer(130000, payload.data(), payload.size() - 8)
                  : writer->append(strata::format::ChunkKind::kThreadName, payload.data(),
                                   payload.size());
    if (!ok) {
      std::fprintf(stderr, "spool_read: write failed (errno %d)\n", writer->stats().last_errno);
      exit(1);
    }
  }
  writer->close();
  return seconds_since(start);
}

void bench_shape(const char* label, size_t total, size_t chunk_size, int runs) {
  std::string path = temp_path(label);
  std::vector<double> write_s;
  std::vector<double> read_s;
  ReadFigures last{};
  // Interleaved: each run writes then reads, so both see the same machine load.
  for (int r = 0; r < runs; ++r) {
    write_s.push_back(write_spool(path, total, chunk_size));
    read_spool(path);  // warm the page cache and the mapping path
    last = read_spool(path);
    read_s.push_back(last.seconds);
  }
  unlink(path.c_str());
  double w = median(write_s), rd = median(read_s);
  double read_mbps = last.bytes / kMB / rd;
  std::printf(
      "%-14s %6zu-byte chunks, %.0f MB file: write %7.0f MB/s | read %7.0f MB/s, %9.0f "
      "chunks/s | read/needed %.1fx\n",
      label, chunk_size, last.bytes / kMB, last.bytes / kMB / w, read_mbps, last.chunks / rd,
      read_mbps / kNeededMBps);
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 128;
  int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  if (mib == 0 || runs <= 0) {
    std::fprintf(stderr, "usage: spool_read [MIB [RUNS]]\n");
    return 2;
  }
  size_t total = mib << 20;

  std::vector<unsigned char> data(64u << 20);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<unsigned char>(i * 2654435761u >> 13);
  std::vector<double> fast, slow;
  uint32_t sink = 0;
  for (int r = 0; r < runs; ++r) {
    auto start = Clock::now();
    sink ^= strata::format::crc32(data.data(), data.size());
    fast.push_back(seconds_since(start));
    start = Clock::now();
    sink ^= strata::format::crc32_bitwise(data.data(), 8u << 20);
    slow.push_back(seconds_since(start));
  }
  double fast_mbps = data.size() / kMB / median(fast);
  double slow_mbps = (8u << 20) / kMB / median(slow);
  std::printf("crc32 slice-by-16 %7.0f MB/s | bitwise %5.0f MB/s | ratio %.1fx   (sink %08x)\n",
              fast_mbps, slow_mbps, fast_mbps / slow_mbps, sink);

  bench_shape("cupti-buffers", total, 4u << 20, runs);
  bench_shape("small-chunks", std::min<size_t>(total, 64u << 20), 64, runs);
  return 0;
}
