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
#include "format/sampler_payloads.h"

namespace strata::sampler::sigprof {
namespace {

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
      case format::ChunkKind::kSamplerSamples: {
        auto record = format::decode_sampler_samples(chunk.payload);
        if (!record) {
          ++summary.bad_records;
          break;
        }
        for (const format::SampleView& v : record->samples) {
          Sample s;
          s.ip = v.regs[format::kSamplerIpRegister];
          s.time = v.time;
          s.period = profile->period_ns * (uint64_t{v.overruns} + 1);
          s.pid = pid;
          s.tid = record->tid;
          s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
          s.regs_index = profile->regs.size() / format::kSamplerRegsPerSample;
          profile->regs.insert(profile->regs.end(), v.regs.begin(), v.regs.end());
          s.stack_offset = profile->stacks.size();
          s.stack_size = static_cast<uint32_t>(v.stack.size());
          const auto* bytes = reinterpret_cast<const uint8_t*>(v.stack.data());
          profile->stacks.insert(profile->stacks.end(), bytes, bytes + v.stack.size());
          profile->samples.push_back(s);
          if (v.time > latest_time) latest_time = v.time;
          ++summary.samples;
        }
        break;
      }
      case format::ChunkKind::kMemoryMap: {
        auto record = format::decode_memory_map(chunk.payload);
        if (!record) {
          ++summary.bad_records;
          break;
        }
        const auto time = static_cast<uint64_t>(record->time_ns);
        if (time > latest_time) latest_time = time;
        for (Mapping& m : parse_proc_maps(record->text, pid, time, &summary.bad_map_lines)) {
          if (seen.emplace(m.addr, m.len, m.pgoff, m.filename).second) {
            maps.push_back(std::move(m));
          }
        }
        break;
      }
      case format::ChunkKind::kSamplerCounters: {
        auto record = format::decode_sampler_counters(chunk.payload);
        if (!record) {
          ++summary.bad_records;
          break;
        }
        summary.have_counters = true;
        summary.counters = *record;
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
