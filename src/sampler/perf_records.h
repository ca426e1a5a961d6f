// Parsing of the kernel's perf_event ring-buffer records (perf_event_open(2),
// include/uapi/linux/perf_event.h) into plain structs.
//
// parse_records is a pure function over bytes so that it can be fuzzed: it
// never reads outside the span it is given, never trusts a size field, and
// counts what it rejects instead of failing. The record views it hands to the
// sink point into the input bytes and are valid only during the callback.
//
// Threading: everything here is reentrant; a RecordSink is called on the
// thread that called parse_records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace strata::sampler {

// Which optional fields the kernel writes, copied from the perf_event_attr
// the events were opened with. Only the sample_type bits listed in
// kSupportedSampleType are understood; records of a layout with other bits
// are counted as bad (their field offsets cannot be known).
struct SampleLayout {
  uint64_t sample_type = 0;       // PERF_SAMPLE_* bits
  uint64_t sample_regs_user = 0;  // register mask; the sample holds popcount(mask) u64s
  bool sample_id_all = false;     // non-sample records end with the sample_id trailer

  // Bytes of the sample_id trailer that sample_id_all appends to non-sample records.
  size_t sample_id_size() const;
  bool supported() const;
};

// PERF_SAMPLE_IDENTIFIER|IP|TID|TIME|ADDR|ID|STREAM_ID|CPU|PERIOD|CALLCHAIN|REGS_USER|STACK_USER.
extern const uint64_t kSupportedSampleType;

// The fields of the sample_id trailer (or of a sample) that identify where and
// when a record was produced; zero where the layout does not carry them.
struct SampleId {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
  uint64_t id = 0;
};

struct SampleRecord {
  uint16_t misc = 0;
  SampleId where;
  uint64_t ip = 0;
  uint64_t addr = 0;
  uint64_t period = 0;
  // Callchain entries as the kernel wrote them, context markers
  // (PERF_CONTEXT_USER, ...) included.
  std::span<const uint64_t> callchain;
  uint64_t regs_abi = 0;           // PERF_SAMPLE_REGS_ABI_*; 0: no registers follow
  std::span<const uint64_t> regs;  // in increasing bit order of sample_regs_user
  std::span<const uint8_t> stack;  // the dyn_size valid bytes of the user stack copy, from sp up
  uint64_t stack_size = 0;         // the size the kernel reserved (>= stack.size())
};

// What PERF_RECORD_MMAP/MMAP2 says of a mapping, less the build id bytes and
// the file name: the parsed record views those in the ring, the sampler's
// Mapping (sampler.h) owns copies. Both carry these fields, declared once.
struct MmapFields {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t addr = 0;
  uint64_t len = 0;
  uint64_t pgoff = 0;
  // MMAP2 carries either a build id (misc has PERF_RECORD_MISC_MMAP_BUILD_ID,
  // attr.build_id, Linux 5.12+) or the inode identity.
  bool has_build_id = false;
  uint8_t build_id_size = 0;
  uint32_t maj = 0;
  uint32_t min = 0;
  uint64_t ino = 0;
  uint64_t ino_generation = 0;
  uint32_t prot = 0;
  uint32_t flags = 0;
};

struct MmapRecord : MmapFields {
  bool mmap2 = false;  // PERF_RECORD_MMAP2 (else PERF_RECORD_MMAP: no inode or build id)
  uint16_t misc = 0;
  const uint8_t* build_id = nullptr;  // 20 bytes when has_build_id
  std::string_view filename;
  SampleId where;
};

struct CommRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC: the name changed because of exec
  std::string_view comm;
  SampleId where;
};

// PERF_RECORD_FORK and PERF_RECORD_EXIT share one body.
struct TaskRecord {
  bool fork = false;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t tid = 0;
  uint32_t ptid = 0;
  uint64_t time = 0;
  SampleId where;
};

struct LostRecord {
  bool samples_only = false;  // PERF_RECORD_LOST_SAMPLES rather than PERF_RECORD_LOST
  uint64_t id = 0;
  uint64_t lost = 0;
  SampleId where;
};

struct ThrottleRecord {
  bool throttle = false;  // PERF_RECORD_THROTTLE (else UNTHROTTLE)
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  SampleId where;
};

// Receives parsed records. Default handlers ignore the record.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void on_sample(const SampleRecord&) {}
  virtual void on_mmap(const MmapRecord&) {}
  virtual void on_comm(const CommRecord&) {}
  virtual void on_task(const TaskRecord&) {}
  virtual void on_lost(const LostRecord&) {}
  virtual void on_throttle(const ThrottleRecord&) {}
};

struct ParseStats {
  uint64_t records = 0;          // well-formed records handed to the sink
  uint64_t unknown_records = 0;  // well-framed records of a type we do not use (skipped)
  uint64_t bad_records = 0;      // rejected records (bad frame or inconsistent body)
  uint64_t bad_bytes = 0;        // bytes of rejected records and of unframeable tails

  ParseStats& operator+=(const ParseStats& other);
};

// Parses consecutive records. A record whose header size is below 8, not a
// multiple of 8 or past the end cannot be framed: it and everything after it
// count as bad bytes. A well-framed record whose body does not fit its own
// size (or the layout) is skipped as one bad record, and parsing goes on.
ParseStats parse_records(std::span<const uint8_t> bytes, const SampleLayout& layout,
                         RecordSink& sink);

// The ring bytes [tail, head) of a ring data area of `size` bytes (a power
// of two) as one contiguous view: straight into the ring when they do not
// run past its end (no copy: the reader parses them in place before it
// releases the space), otherwise unwrapped into `scratch`. The kernel's
// positions are free-running counters, taken modulo size here. Returns
// nullopt if head - tail exceeds the ring size or size is not a power of
// two: the positions are then not trustworthy.
std::optional<std::span<const uint8_t>> view_ring(const uint8_t* data, uint64_t size, uint64_t tail,
                                                  uint64_t head, std::vector<uint8_t>& scratch);

}  // namespace strata::sampler
