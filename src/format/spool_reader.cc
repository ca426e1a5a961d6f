// SpoolReader. The happy path is one bounds check, two loads and a CRC per
// chunk straight from the mapping. Damage is handled in recover(), which
// scans forward for the next chunk that proves itself with a valid CRC; see
// docs/spool-format.md for how each kind of damage is counted.
#include "format/spool_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "format/byte_order.h"
#include "format/crc32.h"

namespace strata::format {
namespace {

constexpr size_t kNpos = static_cast<size_t>(-1);
constexpr unsigned char kMarkerBytes[4] = {kChunkMarker & 0xFF, (kChunkMarker >> 8) & 0xFF,
                                           (kChunkMarker >> 16) & 0xFF, kChunkMarker >> 24};

std::string version_text(unsigned major) {
  return std::to_string(major) + ".x";
}

}  // namespace

// Either a read-only private mapping of the file or bytes handed in.
struct SpoolReader::Storage {
  std::vector<std::byte> bytes;
  void* map = nullptr;
  size_t map_size = 0;

  ~Storage() {
    if (map != nullptr) ::munmap(map, map_size);
  }
  const std::byte* data() const {
    return map != nullptr ? static_cast<const std::byte*>(map) : bytes.data();
  }
  size_t size() const { return map != nullptr ? map_size : bytes.size(); }

  // Drops the mapped pages before `offset` from this process's memory once
  // they add up to kReleaseStep: a spool of a million launches is ~250 MB,
  // and a reader that keeps every page it passed holds all of it (the
  // largest part of strata trace's peak RSS, measured 2026-12-01). The pages
  // stay in the page cache; a view into them faults them back in from the
  // file (MADV_DONTNEED on an unmodified private file mapping), so chunks
  // handed out earlier stay valid.
  void release_before(size_t offset) {
    if (map == nullptr) return;
    static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t end = offset / kPage * kPage;
    if (end < released + kReleaseStep) return;
    ::madvise(static_cast<std::byte*>(map) + released, end - released, MADV_DONTNEED);
    released = end;
  }
  // The whole pages inside [from, from + size), when they are in the mapping.
  void release_range(const std::byte* from, size_t size) {
    if (map == nullptr) return;
    static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const auto base = reinterpret_cast<uintptr_t>(map);
    const auto lo = reinterpret_cast<uintptr_t>(from);
    if (lo < base || lo + size > base + map_size) return;
    const uintptr_t first = (lo + kPage - 1) / kPage * kPage;
    const uintptr_t last = (lo + size) / kPage * kPage;
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
  static constexpr size_t kReleaseStep = size_t{8} << 20;
  size_t released = 0;
};

SpoolReader::SpoolReader(std::unique_ptr<Storage> storage, std::string name)
    : storage_(std::move(storage)),
      data_(storage_->data()),
      size_(storage_->size()),
      name_(std::move(name)) {}

SpoolReader::SpoolReader(SpoolReader&&) noexcept = default;
SpoolReader& SpoolReader::operator=(SpoolReader&&) noexcept = default;
SpoolReader::~SpoolReader() = default;

Result<SpoolReader> SpoolReader::open(const std::string& path) {
  // O_NOFOLLOW: spools sit in a directory the target can write to, and a
  // link swapped in after listing must not be followed. O_NONBLOCK: nor may
  // a FIFO planted there hang strata (it is then refused as not regular).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return make_error(path + ": cannot open spool: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return make_error(path + ": cannot stat spool: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(path + ": not a regular file");
  }
  auto storage = std::make_unique<Storage>();
  if (st.st_size > 0) {
    // The mapping outlives the fd. Spools are read after their writer is
    // done; a file truncated while mapped would fault (SIGBUS).
    size_t size = static_cast<size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return make_error(path + ": cannot map spool: " + std::strerror(err));
    }
    ::madvise(map, size, MADV_SEQUENTIAL);
    storage->map = map;
    storage->map_size = size;
  }
  ::close(fd);
  return finish_open(std::move(storage), path);
}

Result<SpoolReader> SpoolReader::from_bytes(std::vector<std::byte> bytes, std::string name) {
  auto storage = std::make_unique<Storage>();
  storage->bytes = std::move(bytes);
  return finish_open(std::move(storage), std::move(name));
}

Result<SpoolReader> SpoolReader::finish_open(std::unique_ptr<Storage> storage, std::string name) {
  SpoolReader reader(std::move(storage), std::move(name));
  STRATA_TRY(reader.parse_header());
  return reader;
}

Status SpoolReader::parse_header() {
  const std::byte* p = data_;
  auto fail = [&](const std::string& what) { return make_error(name_ + ": " + what); };
  auto truncated = [&](size_t expected) {
    return fail("truncated spool header (" + std::to_string(size_) + " of " +
                std::to_string(expected) + " bytes)");
  };
  if (size_ == 0) return fail("empty spool (the process ended before writing the header)");
  size_t magic_bytes = std::min(size_, sizeof kSpoolMagic);
  if (std::memcmp(p, kSpoolMagic, magic_bytes) != 0) return fail("not a strata spool (bad magic)");
  if (size_ < header_offset::kMinor + 2) return truncated(kFileHeaderSize);

  // Offsets 8 and 10 are frozen across majors, so the version can always be
  // named, whatever the rest of the header looks like.
  header_.major = load_le16(p + header_offset::kMajor);
  header_.minor = load_le16(p + header_offset::kMinor);
  if (header_.major > kFormatMajor) {
    return fail("spool format " + version_text(header_.major) +
                " is newer than this strata reads (" + version_text(kFormatMajor) + ")");
  }
  if (header_.major < kFormatMajor) {
    return fail("spool format " + version_text(header_.major) +
                " is older than this strata reads (" + version_text(kFormatMajor) + ")");
  }
  if (size_ < header_offset::kHeaderSize + 4) return truncated(kFileHeaderSize);
  header_.header_size = load_le32(p + header_offset::kHeaderSize);
  // A newer minor may grow the header; this minor and older ones have
  // exactly the v1.0 size.
  bool size_ok = header_.minor > kFormatMinor ? header_.header_size >= kFileHeaderSize &&
                                                    header_.header_size <= kMaxFileHeaderSize &&
                                                    header_.header_size % kChunkAlignment == 0
                                              : header_.header_size == kFileHeaderSize;
  if (!size_ok) {
    return fail("corrupt spool header (header size " + std::to_string(header_.header_size) + ")");
  }
  if (size_ < header_.header_size) return truncated(header_.header_size);
  uint32_t stored_crc = load_le32(p + header_.header_size - 4);
  if (crc32(p, header_.header_size - 4) != stored_crc) {
    return fail("corrupt spool header (checksum mismatch)");
  }
  header_.pid = load_le32(p + header_offset::kPid);
  header_.clock_id = load_le32(p + header_offset::kClockId);
  header_.start_clock_ns = static_cast<int64_t>(load_le64(p + header_offset::kStartClockNs));
  header_.start_realtime_ns = static_cast<int64_t>(load_le64(p + header_offset::kStartRealtimeNs));
  header_.flags = load_le32(p + header_offset::kFlags);
  pos_ = header_.header_size;
  return Ok{};
}

SpoolReader::Check SpoolReader::check_at(size_t at) const {
  size_t remaining = size_ - at;
  if (remaining < kChunkHeaderSize) return Check::kShortHeader;
  const std::byte* p = data_ + at;
  if (load_le32(p + chunk_offset::kMarker) != kChunkMarker) return Check::kBadMarker;
  uint32_t length = load_le32(p + chunk_offset::kLength);
  if (length > kMaxChunkPayload) return Check::kBadLength;
  if (length > remaining - kChunkHeaderSize) return Check::kOverrun;
  uint32_t crc = crc32_update(0, p + chunk_offset::kKind, 8);
  crc = crc32_update(crc, p + kChunkHeaderSize, length);
  return crc == load_le32(p + chunk_offset::kCrc) ? Check::kValid : Check::kBadCrc;
}

SpoolReader::Scan SpoolReader::scan_from(size_t from) const {
  Scan scan{kNpos, kNpos};
  size_t at = from;
  while (at < size_) {
    const void* hit = std::memchr(data_ + at, kMarkerBytes[0], size_ - at);
    if (hit == nullptr) break;
    at = static_cast<size_t>(static_cast<const std::byte*>(hit) - data_);
    Check check = check_at(at);
    if (check == Check::kValid) {
      scan.valid_at = at;
      return scan;
    }
    if (scan.truncated_at == kNpos) {
      size_t n = std::min(size_ - at, sizeof kMarkerBytes);
      bool marker_prefix = std::memcmp(data_ + at, kMarkerBytes, n) == 0;
      if (check == Check::kOverrun || (check == Check::kShortHeader && marker_prefix)) {
        scan.truncated_at = at;
      }
    }
    ++at;
  }
  return scan;
}

void SpoolReader::recover(size_t at, Check check) {
  if (check == Check::kShortHeader) {
    // Too short for any chunk: the start of one cut off, or leftover garbage.
    size_t n = std::min(size_ - at, sizeof kMarkerBytes);
    if (std::memcmp(data_ + at, kMarkerBytes, n) == 0) {
      stats_.truncated_bytes += size_ - at;
    } else {
      ++stats_.resyncs;
      stats_.skipped_bytes += size_ - at;
    }
    pos_ = size_;
    return;
  }
  Scan scan = scan_from(at + 1);
  if (check == Check::kOverrun && scan.valid_at == kNpos) {
    // Runs past the end and nothing valid follows: the writer was cut off.
    stats_.truncated_bytes += size_ - at;
    pos_ = size_;
    return;
  }
  if (check != Check::kBadMarker) ++stats_.crc_failures;
  ++stats_.resyncs;
  if (scan.valid_at != kNpos) {
    stats_.skipped_bytes += scan.valid_at - at;
    pos_ = scan.valid_at;
  } else if (scan.truncated_at != kNpos) {
    stats_.skipped_bytes += scan.truncated_at - at;
    stats_.truncated_bytes += size_ - scan.truncated_at;
    pos_ = size_;
  } else {
    stats_.skipped_bytes += size_ - at;
    pos_ = size_;
  }
}

void SpoolReader::release(std::span<const std::byte> payload) {
  storage_->release_range(payload.data(), payload.size());
}

bool SpoolReader::next(Chunk* chunk) {
  storage_->release_before(pos_);
  while (pos_ < size_) {
    size_t at = pos_;
    Check check = check_at(at);
    if (check != Check::kValid) {
      recover(at, check);
      continue;
    }
    const std::byte* p = data_ + at;
    uint32_t kind = load_le32(p + chunk_offset::kKind);
    uint32_t length = load_le32(p + chunk_offset::kLength);
    // check_at proved at + 16 + length <= size_; padding cut off by a crash
    // does not make the chunk incomplete.
    pos_ = std::min(at + kChunkHeaderSize + align_chunk(length), size_);
    if (stats_.end_seen) ++stats_.chunks_after_end;
    ++stats_.chunks_ok;
    stats_.payload_bytes += length;
    std::span<const std::byte> payload(p + kChunkHeaderSize, length);

    if (kind == static_cast<uint32_t>(ChunkKind::kEndOfStream)) {
      stats_.end_seen = true;
      auto end = decode_end_of_stream(payload);
      stats_.end.reset();
      if (end.ok()) stats_.end = *end;
      stats_.clean_end = end.ok() && end->signal == 0;
      continue;
    }
    if (!is_known_kind(kind)) {
      ++stats_.unknown_kinds;
      continue;
    }
    if (reinterpret_cast<uintptr_t>(payload.data()) % kChunkAlignment != 0) {
      scratch_.resize((length + sizeof(uint64_t) - 1) / sizeof(uint64_t));
      std::memcpy(scratch_.data(), payload.data(), length);
      payload = {reinterpret_cast<const std::byte*>(scratch_.data()), length};
    }
    chunk->in_file = payload.data() == p + kChunkHeaderSize;
    chunk->kind = static_cast<ChunkKind>(kind);
    chunk->payload = payload;
    chunk->offset = at;
    return true;
  }
  return false;
}

std::string SpoolReader::where(const Chunk& chunk) const {
  return name_ + " at offset " + std::to_string(chunk.offset) + " (" +
         chunk_kind_name(static_cast<uint32_t>(chunk.kind)) + " chunk)";
}

}  // namespace strata::format
