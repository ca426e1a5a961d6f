// Every length is checked against what is left before it is used, in 64-bit
// arithmetic, so no field value can make a read go past the payload.
#include "sampler/inprocess/sigprof_decode.h"

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <charconv>
#include <set>
#include <tuple>

#include "format/byte_order.h"
#include "format/payloads.h"

namespace strata::sampler::sigprof {
namespace {

using format::load_le32;
using format::load_le64;

Error malformed(const char* what, const std::string& detail) {
  return make_error(std::string("malformed sigprof ") + what + " record: " + detail);
}

std::string bytes_text(uint64_t n) {
  return std::to_string(n) + " bytes";
}

Result<Record> decode_samples(std::span<const std::byte> payload) {
  if (payload.size() < kSamplesPrefix) {
    return malformed("samples", bytes_text(payload.size()) + ", needs at least 16");
  }
  Record record;
  record.kind = RecordKind::kSamples;
  const std::byte* p = payload.data();
  record.samples.tid = load_le32(p + 8);
  const uint32_t count = load_le32(p + 12);
  uint64_t at = kSamplesPrefix;
  const uint64_t size = payload.size();
  if (count > (size - at) / kSampleHeader) {
    return malformed("samples",
                     std::to_string(count) + " samples cannot fit in " + bytes_text(size - at));
  }
  record.samples.samples.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (size - at < kSampleHeader) {
      return malformed("samples", "sample " + std::to_string(i) + " runs past the end");
    }
    const std::byte* s = p + at;
    SampleView view;
    view.time = load_le64(s + sample_offset::kTime);
    view.overruns = load_le32(s + sample_offset::kOverruns);
    const uint32_t stack_size = load_le32(s + sample_offset::kStackSize);
    if (stack_size > kMaxStackBytes) {
      return malformed("samples", "sample " + std::to_string(i) + " has a stack of " +
                                      bytes_text(stack_size) + ", more than " +
                                      std::to_string(kMaxStackBytes));
    }
    for (int r = 0; r < kRegsPerSample; ++r) {
      view.regs[r] = load_le64(s + sample_offset::kRegs + 8 * r);
    }
    const uint64_t padded = (kSampleHeader + uint64_t{stack_size} + 7) & ~uint64_t{7};
    if (padded > size - at) {
      return malformed("samples", "sample " + std::to_string(i) + "'s stack runs past the end");
    }
    view.stack = payload.subspan(at + kSampleHeader, stack_size);
    record.samples.samples.push_back(view);
    at += padded;
  }
  if (at != size) {
    return malformed("samples",
                     bytes_text(size - at) + " left after " + std::to_string(count) + " samples");
  }
  return record;
}

Result<Record> decode_maps(std::span<const std::byte> payload) {
  if (payload.size() < kMapsPrefix) {
    return malformed("maps", bytes_text(payload.size()) + ", needs at least 16");
  }
  Record record;
  record.kind = RecordKind::kMaps;
  record.maps.time = load_le64(payload.data() + 8);
  record.maps.text = {reinterpret_cast<const char*>(payload.data()) + kMapsPrefix,
                      payload.size() - kMapsPrefix};
  return record;
}

Result<Record> decode_counters(std::span<const std::byte> payload) {
  if (payload.size() < kCountersPrefix || (payload.size() - kCountersPrefix) % 8 != 0) {
    return malformed("counters", bytes_text(payload.size()) + " is not 16 + 8n");
  }
  Record record;
  record.kind = RecordKind::kCounters;
  record.counters.hz = load_le32(payload.data() + 8);
  record.counters.stack_bytes = load_le32(payload.data() + 12);
  const size_t slots = (payload.size() - kCountersPrefix) / 8;
  for (size_t i = 0; i < slots && i < record.counters.totals.size(); ++i) {
    record.counters.totals[i] = load_le64(payload.data() + kCountersPrefix + 8 * i);
  }
  return record;
}

// Hex number at the front of `text`, consuming it.
bool take_hex(std::string_view& text, uint64_t* out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), *out, 16);
  if (r.ec != std::errc() || r.ptr == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(r.ptr - text.data()));
  return true;
}

bool take_dec(std::string_view& text, uint64_t* out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), *out, 10);
  if (r.ec != std::errc() || r.ptr == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(r.ptr - text.data()));
  return true;
}

bool take_char(std::string_view& text, char c) {
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

void skip_spaces(std::string_view& text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
}

// "start-end perms offset maj:min inode [path]"; false on anything else.
bool parse_maps_line(std::string_view line, Mapping* m) {
  uint64_t start = 0, end = 0, pgoff = 0, maj = 0, min = 0, ino = 0;
  if (!take_hex(line, &start) || !take_char(line, '-') || !take_hex(line, &end) || end < start) {
    return false;
  }
  skip_spaces(line);
  if (line.size() < 4) return false;
  const std::string_view perms = line.substr(0, 4);
  line.remove_prefix(4);
  skip_spaces(line);
  if (!take_hex(line, &pgoff)) return false;
  skip_spaces(line);
  if (!take_hex(line, &maj) || !take_char(line, ':') || !take_hex(line, &min)) return false;
  skip_spaces(line);
  if (!take_dec(line, &ino)) return false;
  skip_spaces(line);
  m->addr = start;
  m->len = end - start;
  m->pgoff = pgoff;
  m->maj = static_cast<uint32_t>(maj);
  m->min = static_cast<uint32_t>(min);
  m->ino = ino;
  m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
            (perms[2] == 'x' ? PROT_EXEC : 0);
  m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
  m->filename = std::string(line);
  return true;
}

}  // namespace

Result<Record> decode_record(std::span<const std::byte> payload) {
  if (payload.size() < kRecordPrefix) {
    return make_error("malformed sigprof record: " + bytes_text(payload.size()) +
                      ", needs at least 8");
  }
  const uint32_t tag = load_le32(payload.data());
  if (tag != kSigprofTag) {
    return make_error("not a sigprof record (tag " + std::to_string(tag) + ")");
  }
  const uint32_t kind = load_le32(payload.data() + 4);
  switch (static_cast<RecordKind>(kind)) {
    case RecordKind::kSamples:
      return decode_samples(payload);
    case RecordKind::kMaps:
      return decode_maps(payload);
    case RecordKind::kCounters:
      return decode_counters(payload);
  }
  return make_error("unknown sigprof record kind " + std::to_string(kind));
}

std::vector<Mapping> parse_proc_maps(std::string_view text, uint32_t pid, uint64_t time,
                                     uint64_t* bad_lines) {
  std::vector<Mapping> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty()) continue;
    Mapping m;
    if (!parse_maps_line(line, &m)) {
      ++*bad_lines;
      continue;
    }
    // perf sends MMAP2 for executable mappings only (no mmap_data): the same
    // input for the unwinder.
    if (!(m.prot & PROT_EXEC)) continue;
    m.pid = pid;
    m.tid = pid;
    m.time = time;
    out.push_back(std::move(m));
  }
  return out;
}

SpoolSummary add_sigprof_spool(format::SpoolReader& reader, RawProfile* profile) {
  SpoolSummary summary;
  summary.pid = reader.header().pid;
  summary.start_ns = reader.header().start_clock_ns;
  const uint32_t pid = summary.pid;

  std::vector<Mapping>& maps = profile->mmaps[pid];
  std::set<std::tuple<uint64_t, uint64_t, uint64_t, std::string>> seen;
  for (const Mapping& m : maps) seen.emplace(m.addr, m.len, m.pgoff, m.filename);

  uint64_t latest_time = static_cast<uint64_t>(summary.start_ns);
  bool main_named = false;
  format::Chunk chunk;
  while (reader.next(&chunk)) {
    switch (chunk.kind) {
      case format::ChunkKind::kThreadName: {
        auto name = format::decode_thread_name(chunk.payload);
        if (!name) {
          ++summary.bad_records;
          break;
        }
        Comm c;
        c.time = latest_time;
        c.pid = pid;
        c.tid = name->tid;
        c.name = std::string(name->name);
        // The first name of the main thread stands for the image's exec,
        // as perf's COMM|exec record does.
        c.exec = !main_named && name->tid == pid;
        if (c.exec) main_named = true;
        profile->comms.push_back(std::move(c));
        break;
      }
      case format::ChunkKind::kProcessInfo: {
        auto info = format::decode_process_info(chunk.payload);
        if (!info) {
          ++summary.bad_records;
          break;
        }
        summary.has_process_info = true;
        summary.ppid = info->ppid;
        break;
      }
      case format::ChunkKind::kCuptiBuffer: {
        auto record = decode_record(chunk.payload);
        if (!record) {
          ++summary.bad_records;
          break;
        }
        if (record->kind == RecordKind::kSamples) {
          for (const SampleView& v : record->samples.samples) {
            Sample s;
            s.ip = v.regs[3];
            s.time = v.time;
            s.period = profile->period_ns * (uint64_t{v.overruns} + 1);
            s.pid = pid;
            s.tid = record->samples.tid;
            s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
            s.regs_index = profile->regs.size() / kRegsPerSample;
            profile->regs.insert(profile->regs.end(), v.regs.begin(), v.regs.end());
            s.stack_offset = profile->stacks.size();
            s.stack_size = static_cast<uint32_t>(v.stack.size());
            const auto* bytes = reinterpret_cast<const uint8_t*>(v.stack.data());
            profile->stacks.insert(profile->stacks.end(), bytes, bytes + v.stack.size());
            profile->samples.push_back(s);
            if (v.time > latest_time) latest_time = v.time;
            ++summary.samples;
          }
        } else if (record->kind == RecordKind::kMaps) {
          if (record->maps.time > latest_time) latest_time = record->maps.time;
          for (Mapping& m :
               parse_proc_maps(record->maps.text, pid, record->maps.time, &summary.bad_map_lines)) {
            if (seen.emplace(m.addr, m.len, m.pgoff, m.filename).second) {
              maps.push_back(std::move(m));
            }
          }
        } else {
          summary.have_counters = true;
          summary.counters = record->counters;
        }
        break;
      }
      default:
        break;  // kinds this producer never writes: nothing to add
    }
  }
  if (maps.empty()) profile->mmaps.erase(pid);
  summary.stats = reader.stats();
  return summary;
}

}  // namespace strata::sampler::sigprof
